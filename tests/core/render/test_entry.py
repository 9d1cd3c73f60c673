"""The digest entry as a reader sees it: the repo in a multi-repo digest, the GitHub and the
full-report links, Telegram code spans, the still-unread group and keyboards within limits."""

from __future__ import annotations

import dataclasses
from typing import Any

from bot.core.digest.select import DigestEntry, DigestFilter, StoredReport, build_digest
from bot.core.models import Format, Layout, Locale, Verbosity
from bot.core.render.labels import labels
from bot.core.render.limits.telegram import TELEGRAM_MAX_BUTTONS, TELEGRAM_MAX_ENTITIES
from bot.core.render.options import DigestOptions
from bot.core.render.renderer import Renderer
from bot.core.render.telegram import entry_menu, menu_opened
from bot.core.reports.model import ImpactLevel, RecommendationLevel, Report
from tests.fakes.telegram.messages import parse_text
from tests.kits.render import check_platform

RENDERER = Renderer()


def report(**fields: Any) -> Report:
    base: dict[str, Any] = {
        "repo": "verl-project/verl",
        "number": 7422,
        "title": "[rollout] fix: preserve dummy load_format",
        "url": "http://prhub.com.cn/verl-project/verl/pull/7422",
        "summary": "移除 dummy 格式覆盖",
        "recommendation": "值得精读。该 PR 展示了一个跨后端共有的配置契约。",
        "recommendation_level": RecommendationLevel.MUST_READ,
        "impact_level": ImpactLevel.MEDIUM,
        "tags": ["rollout"],
    }
    return Report(**(base | fields))


def digest_of(*reports: Report, flt: DigestFilter | None = None) -> Any:
    items = [StoredReport(r, seq) for seq, r in enumerate(reports, 1)]
    return build_digest(items, flt or DigestFilter(), "team")


def text(digest: Any, fmt: Format = Format.TEXT, locale: Locale = Locale.EN) -> str:
    return "\n".join(m.text for m in RENDERER.digest(digest, fmt, locale))


def test_a_multi_repo_digest_names_each_prs_repo() -> None:
    mixed = digest_of(report(), report(repo="sgl-project/sglang", number=9087))

    shown = text(mixed)

    assert "★ verl#7422 [rollout]" in shown
    assert "★ sglang#9087 [rollout]" in shown


def test_a_single_repo_digest_shows_the_bare_number() -> None:
    shown = text(digest_of(report(), report(number=7458)))

    assert "★ #7422 [rollout]" in shown
    assert "verl#7422" not in shown


def test_an_entry_links_the_pr_on_github_and_the_full_report() -> None:
    [telegram] = RENDERER.digest(digest_of(report()), Format.TELEGRAM, Locale.ZH)
    html = telegram.payload["text"]

    assert '<a href="https://github.com/verl-project/verl/pull/7422">#7422</a>' in html
    assert '<a href="http://prhub.com.cn/verl-project/verl/pull/7422">原文链接</a>' in html


def test_a_report_whose_url_is_the_pr_itself_gets_one_link() -> None:
    own = report(url="https://github.com/verl-project/verl/pull/7422")

    [telegram] = RENDERER.digest(digest_of(own), Format.TELEGRAM, Locale.EN)

    assert telegram.payload["text"].count("<a ") == 1
    assert "full report" not in telegram.text


def test_a_repo_that_is_not_owner_name_gets_no_github_link() -> None:
    # the parser refuses such a repo now, but a row stored by an older version still renders
    odd = report(url=None).model_copy(update={"repo": "<@U1>/x y"})

    [telegram] = RENDERER.digest(digest_of(odd), Format.TELEGRAM, Locale.EN)

    assert "<a " not in telegram.payload["text"]
    assert "#7422" in telegram.text


def test_telegram_shows_code_spans_as_code_and_keeps_a_lone_backtick() -> None:
    coded = report(summary="set `load_format=<dummy>` & keep `a` but not ` this")

    [telegram] = RENDERER.digest(digest_of(coded), Format.TELEGRAM, Locale.EN)
    html = telegram.payload["text"]

    assert "set <code>load_format=&lt;dummy&gt;</code> &amp; keep <code>a</code>" in html
    assert "but not ` this" in html
    plain, entities = parse_text(html, "HTML", None)
    assert "set load_format=<dummy> & keep a but not ` this" in plain
    assert [e.type for e in entities].count("code") == 2


def test_many_code_spans_stay_within_telegrams_entity_limit() -> None:
    many = [report(number=n, summary=" ".join(f"`c{k}`" for k in range(80))) for n in range(1, 6)]

    messages = RENDERER.digest(digest_of(*many), Format.TELEGRAM, Locale.EN)

    check_platform(Format.TELEGRAM, messages)
    for message in messages:
        _, entities = parse_text(message.payload["text"], "HTML", None)
        assert len(entities) <= TELEGRAM_MAX_ENTITIES


def test_a_hostile_tag_never_pings_from_a_mute_button() -> None:
    hostile = report(tags=["<!here>"])

    slack = RENDERER.digest(digest_of(hostile), Format.SLACK, Locale.EN)
    telegram = RENDERER.digest(digest_of(hostile), Format.TELEGRAM, Locale.EN)

    check_platform(Format.SLACK, slack)
    check_platform(Format.TELEGRAM, telegram)
    [row] = telegram[0].payload["reply_markup"]["inline_keyboard"]
    menu = entry_menu("verl-project/verl#7422", "#7422", hostile.tags, labels(Locale.EN))
    opened = menu_opened([row], row[2]["callback_data"], menu)  # the mute is in ⋯'s menu
    assert {"text": "#7422 🔇 !here 7d", "callback_data": "mute:<!here>"} in opened[2]


def test_thirty_entries_keep_every_telegram_keyboard_within_its_limit() -> None:
    many = [report(number=n, title=f"PR {n}") for n in range(1, 31)]

    messages = RENDERER.digest(digest_of(*many), Format.TELEGRAM, Locale.EN)

    for message in messages:
        rows = message.payload["reply_markup"]["inline_keyboard"]
        assert sum(len(row) for row in rows) <= TELEGRAM_MAX_BUTTONS
    reads = [
        button["callback_data"]
        for message in messages
        for row in message.payload["reply_markup"]["inline_keyboard"]
        for button in row
        if button["callback_data"].startswith("read:")
    ]
    assert len(reads) == 30


def test_still_unread_prs_come_above_the_groups_with_a_dropped_note_in_chinese() -> None:
    digest = digest_of(report(number=7500, tags=["fix"]))
    old = StoredReport(report(number=7001), 1)
    digest = dataclasses.replace(digest, unread=(DigestEntry(old, "rollout"),), unread_dropped=3)

    shown = text(digest, locale=Locale.ZH)

    assert shown.index("[仍未读（1）]") < shown.index("★ #7001") < shown.index("[fix]")
    assert "另有 3 个未读 PR 超过保留期限，已移出。" in shown


def test_an_empty_digest_with_unread_prs_still_shows_them() -> None:
    digest = build_digest([], DigestFilter(), "team")
    old = StoredReport(report(number=7001), 1)
    digest = dataclasses.replace(digest, unread=(DigestEntry(old, "rollout"),))

    shown = text(digest)

    assert "[Still unread (1)]" in shown
    assert "No new PRs" not in shown


def test_a_big_threaded_group_part_splits_within_limits_and_repeats_only_its_heading() -> None:
    many = [report(number=n, title=f"PR {n}", summary="长摘要 " * 200) for n in range(1, 41)]
    options = DigestOptions(Layout.THREADED, Verbosity.FULL, synthesis=True, more_key="run-1")

    for fmt in (Format.SLACK, Format.TELEGRAM):
        summary, group = RENDERER.digest_parts(digest_of(*many), fmt, Locale.EN, options=options)
        check_platform(fmt, summary.messages)
        check_platform(fmt, group.messages)
        assert len(group.messages) > 1
        for message in group.messages:
            assert "[rollout]" in message.text.splitlines()[0]
            assert "tag view" not in message.text


def test_the_full_report_starts_a_new_message_at_each_section() -> None:
    full = report(motivation="动机段落", implementation="实现段落", risks="风险段落")

    for fmt in Format:
        messages = RENDERER.report_pages(full, fmt, Locale.EN)
        check_platform(fmt, messages)
        firsts = ["\n".join(message.text.splitlines()[:2]) for message in messages]
        assert len(messages) == 4
        assert "Full report" in firsts[0]
        assert "Motivation" in firsts[1] and "动机段落" in messages[1].text
        assert "Implementation" in firsts[2] and "实现段落" in messages[2].text
        assert "Risks and impact" in firsts[3] and "风险段落" in messages[3].text
