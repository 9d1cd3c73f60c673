"""Report text can never ping, spoof a link, break Telegram's parser, or overflow a message,
in any layout (flat, threaded, topics) and verbosity, with the synthesis and the unread group.

Every field of generated reports mixes Slack markup (`<!channel>`, `<@U1>`, `<url|label>`),
HTML (`<script>`, `&`), mrkdwn (`*_~`, backticks), `||`, emoji, RTL marks and CJK. Each
rendered message must pass the same checks the fake Slack and Telegram APIs apply, plus the
platform limits the renderers promise.
"""

from __future__ import annotations

import dataclasses
import json
import os
from datetime import date
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.digest.select import DigestEntry, DigestFilter, StoredReport, build_digest
from bot.core.models import Format, Layout, Locale, Section, Verbosity
from bot.core.render.options import DigestOptions
from bot.core.reports.model import ImpactLevel, KeyFile, RecommendationLevel, Report, Snippet
from tests.kits.safety import FORMATS, LOCALES, RENDERER, SECTIONS, Deck, assert_safe, deal_report


@pytest.mark.slow  # ~70 s for 10,000 examples (RENDER_SAFETY_EXAMPLES=500 for a quick run)
@settings(
    max_examples=int(os.environ.get("RENDER_SAFETY_EXAMPLES", "10000")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.binary(min_size=300, max_size=1000))
def test_no_report_text_can_ping_spoof_a_link_or_break_a_message(data: bytes) -> None:
    deck = Deck(data)
    fmt, locale, section = deck.choice(FORMATS), deck.choice(LOCALES), deck.choice(SECTIONS)
    tags = [deck.choice(["rollout", "<!here>", "漢"]) for _ in range(deck.count(2))]
    items = [deal_report(deck) for _ in range(1 + deck.count(2))]
    stored = [StoredReport(report, seq, revision=seq) for seq, report in enumerate(items, 1)]
    digest = build_digest(stored, DigestFilter(tags=tuple(tags)), items[0].repo, synthesis=True)
    unread = tuple(DigestEntry(item, deck.choice(["rollout", "<!here>"])) for item in stored[1:])
    digest = dataclasses.replace(digest, unread=unread, unread_dropped=deck.count(2))
    options = DigestOptions(
        layout=deck.choice(list(Layout)),
        verbosity=deck.choice(list(Verbosity)),
        synthesis=deck.choice([True, False]),
        more_key=deck.choice(["", "run-7", "r" * 80]),
    )

    parts = RENDERER.digest_parts(digest, fmt, locale, date=date(2026, 8, 18), options=options)
    assert parts
    for part in parts:
        assert_safe(fmt, part.messages)
    assert_safe(fmt, RENDERER.section(stored[0], section, fmt, locale))
    assert_safe(fmt, RENDERER.report_pages(stored[-1], fmt, locale))
    assert_safe(fmt, [RENDERER.notice("not_found", fmt, locale, ref=items[-1].title)])


def huge_report() -> Report:
    paragraph = "超长段落 <!channel> & `code` 😀 " * 40  # ~1 KB
    text_150kb = "\n\n".join(paragraph for _ in range(150))
    return Report(
        repo="verl-project/verl",
        number=7422,
        title="[rollout] fix: " + "很长的标题 😀 " * 30,
        url="https://github.com/verl-project/verl/pull/7422",
        summary=paragraph * 30,  # 30 KB: more than any one message holds
        recommendation="值得精读。" + paragraph * 5,
        recommendation_level=RecommendationLevel.MUST_READ,
        motivation=text_150kb,
        implementation=paragraph * 20,  # one 20 KB paragraph: split inside it
        key_files=[
            KeyFile(path=f"verl/module_{n}/file_{n}.py", module="模块", note=paragraph[:200])
            for n in range(400)
        ],
        snippets=[Snippet(path="a.py", language="python", code="x = '<&>'\n" * 3000)],
        risks=paragraph * 10,
        impact_level=ImpactLevel.HIGH,
        risk_flags=[f"风险标记 {n} <@U{n}>" for n in range(30)],
        tags=["rollout", "fix"],
    )


@pytest.mark.parametrize("fmt", list(Format))
def test_a_huge_report_renders_split_in_every_format(fmt: Format) -> None:
    report = huge_report()
    assert len(report.motivation.encode()) > 150_000
    digest = build_digest([StoredReport(report, 1, 2)], DigestFilter(), report.repo)

    digest_messages = RENDERER.digest(digest, fmt, Locale.ZH)
    full = RENDERER.section(report, Section.FULL, fmt, Locale.EN)
    assert_safe(fmt, RENDERER.report_pages(report, fmt, Locale.ZH))
    files = RENDERER.section(report, Section.FILES, fmt, Locale.ZH)

    assert_safe(fmt, digest_messages)
    assert_safe(fmt, full)
    assert_safe(fmt, files)
    assert len(full) > 10
    shown_files = sum(message.text.count("verl/module_") for message in files)
    assert shown_files == 400
    entry = digest_messages[0]
    assert len(digest_messages) == 1
    assert "…" in entry.text  # the entry was cut to fit, not split
    assert str(report.url) in json.dumps(entry.payload)  # and keeps its link


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("verbosity", list(Verbosity))
def test_a_mention_split_by_a_code_span_is_defanged(locale: Locale, verbosity: Verbosity) -> None:
    # Found by the property test: Telegram drops the <code> tags, so `@` before a span (or
    # at a span's end) joins the word after it into a mention the reader's client notifies.
    hostile = "<!channel>   @`0<!channel>` then `a@`dmin and `x@``y`"
    updated = report_with(title=hostile, summary=hostile, risk_flags=[hostile])
    stored = [StoredReport(report_with(title="t"), 1, 1), StoredReport(updated, 2, 2)]
    digest = build_digest(stored, DigestFilter(), "verl-project/verl", synthesis=True)
    options = DigestOptions(verbosity=verbosity, synthesis=True)

    parts = RENDERER.digest_parts(digest, Format.TELEGRAM, locale, options=options)

    for part in parts:
        assert_safe(Format.TELEGRAM, part.messages)
    shown = "\n".join(m.text for part in parts for m in part.messages)
    assert "@\u20600<!channel>" in shown  # still reads `@0`, the code span still shown
    assert "a@\u2060dmin" in shown
    assert "x@\u2060y" in shown


def report_with(**fields: Any) -> Report:
    base: dict[str, Any] = {
        "repo": "verl-project/verl",
        "number": 1,
        "title": "t",
        "url": None,
        "summary": "s",
        "recommendation": "r",
        "recommendation_level": RecommendationLevel.MUST_READ,
        "tags": [],
    }
    return Report(**(base | fields))
