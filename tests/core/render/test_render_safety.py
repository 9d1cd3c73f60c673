"""Report text can never ping, spoof a link, break Telegram's parser, or overflow a message.

Every field of generated reports mixes Slack markup (`<!channel>`, `<@U1>`, `<url|label>`),
HTML (`<script>`, `&`), mrkdwn (`*_~`, backticks), `||`, emoji, RTL marks and CJK. Each
rendered message must pass the same checks the fake Slack and Telegram APIs apply, plus the
platform limits the renderers promise.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.models import Format, Locale
from bot.core.render.renderer import Renderer, Section
from bot.core.render.slack import (
    SLACK_HEADER_MAX,
    SLACK_MAX_BLOCKS,
    SLACK_MAX_MESSAGE_CHARS,
    SLACK_SECTION_TEXT_MAX,
)
from bot.core.render.telegram import TELEGRAM_MAX_UTF16, parse_callback_data
from bot.core.reports.model import (
    ImpactLevel,
    KeyFile,
    RecommendationLevel,
    RelatedPR,
    Report,
    Snippet,
)
from bot.core.select import DigestFilter, StoredReport, build_digest
from tests.fakes.slack.messages import check_message
from tests.fakes.telegram.html import utf16_len
from tests.fakes.telegram.messages import check_reply_markup, parse_text

RENDERER = Renderer()

NASTY = [
    "<!channel>",
    "<!here>",
    "<!everyone>",
    "<@U1>",
    "<!subteam^S1|team>",
    "<#C1>",
    "<https://evil.example|label>",
    "<javascript:alert(1)|x>",
    "@here",
    "@channel",
    "@everyone",
    "@admin",
    "<script>alert(1)</script>",
    "</b>",
    "<b>",
    "&",
    "&amp;",
    "&lt;",
    "&#0;",
    "*_~",
    "`",
    "```",
    "||",
    "|",
    ">",
    "😀",
    "👨‍👩‍👧",
    "👍🏽",
    "\u200f",
    "\u202e",
    "漢字",
    "。",
    "\n",
    "\n\n",
    " ",
    '"',
    "'",
    "\x1b[2J",
]
URLS = [
    None,
    "https://github.com/verl-project/verl/pull/1",
    "http://prhub.com.cn/verl-project/verl/pull/7422?a=1&b=2",
    "javascript:alert(1)",
    "https://evil.example|label",
    "https://a.example/<!channel>",
    "tg://user?id=1",
    "ftp://x.example/",
    'https://x.example/"onmouseover="',
    "<@U1>",
]

# Code points beyond the fixed atoms: a byte picks a range, the next one a point inside it.
CODE_POINT_RANGES = [
    (0x20, 0x7E),  # ASCII
    (0xA0, 0x17F),  # Latin-1, Latin Extended-A
    (0x300, 0x36F),  # combining marks
    (0x4E00, 0x9FFF),  # CJK
    (0x1F300, 0x1FAFF),  # emoji
    (0x200B, 0x200F),  # zero-width and direction marks
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x0, 0x1F),  # control characters
]


class Deck:
    """Deals report text from one hypothesis byte string: one cheap draw per example (drawing
    every field separately costs more than rendering it), and it still shrinks well."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        value = self.data[self.pos] if self.pos < len(self.data) else 0
        self.pos += 1
        return value

    def atom(self) -> str:
        pick = self.byte()
        if pick < 4 * len(NASTY):
            return NASTY[pick % len(NASTY)]
        low, high = CODE_POINT_RANGES[pick % len(CODE_POINT_RANGES)]
        return chr(low + (self.byte() * 256 + self.byte()) % (high - low + 1))

    def text(self, max_atoms: int = 12) -> str:
        return "".join(self.atom() for _ in range(self.byte() % (max_atoms + 1)))

    def choice(self, options: list[Any]) -> Any:
        return options[self.byte() % len(options)]

    def count(self, most: int) -> int:
        return self.byte() % (most + 1)


def deal_report(deck: Deck) -> Report:
    owner = deck.choice(["verl-project", "a" * 60, "<!here>", "x"])
    return Report(
        repo=f"{owner}/{deck.choice(['verl', '<@U1>', 'r'])}",
        number=1 + deck.byte() * 65_537,
        title=deck.text() or "t",
        url=deck.choice(URLS),
        merged_at=deck.choice([None, datetime(2026, 8, 17, 12, 51)]),
        summary=deck.text(),
        recommendation=deck.text(),
        recommendation_level=deck.choice(list(RecommendationLevel)),
        motivation=deck.text(),
        implementation=deck.text(),
        key_files=[
            KeyFile(path=deck.text(3) or "p", module=deck.text(2), note=deck.text(4))
            for _ in range(deck.count(2))
        ],
        key_symbols=[deck.text(2) for _ in range(deck.count(2))],
        snippets=[
            Snippet(
                path=deck.text(3) or "p",
                note=deck.text(3),
                language=deck.choice(["python", "", "<x>", 'py"']),
                code=deck.text(),
            )
            for _ in range(deck.count(1))
        ],
        comment_highlights=deck.text(),
        risks=deck.text(),
        impact=deck.text(),
        impact_level=deck.choice([None, *ImpactLevel]),
        risk_flags=[deck.text(3) for _ in range(deck.count(3))],
        related=[
            RelatedPR(number=7434, title=deck.text(3), relation=deck.text(3))
            for _ in range(deck.count(1))
        ],
        tags=[deck.choice(["rollout", "<!here>", "a&b", "漢"]) for _ in range(deck.count(2))],
    )


# --- the checks every rendered message must pass ---------------------------------------------

_OUR_LINK = re.compile(r"<(https?://[^<>|\s]+)\|(#[0-9]+|https?://[^<>|\s]+)>")
_ANY_MARKUP = re.compile(r"<[^<>]*>")


def slack_texts(payload: dict[str, Any]) -> Iterator[str]:
    yield payload["text"]
    for block in payload["blocks"]:
        text = block.get("text")
        if isinstance(text, dict):
            yield text["text"]
        for element in block.get("elements", ()):
            inner = element.get("text")
            yield inner["text"] if isinstance(inner, dict) else inner


def assert_slack_message_is_safe(payload: dict[str, Any]) -> None:
    check_message(payload, allowed_users=set())  # raises SlackRefusal: live mention, bad blocks
    assert "link_names" not in payload
    assert "parse" not in payload
    blocks = payload["blocks"]
    assert 1 <= len(blocks) <= SLACK_MAX_BLOCKS
    total = 0
    for block in blocks:
        text = block.get("text")
        if block["type"] == "header":
            assert len(text["text"]) <= SLACK_HEADER_MAX
        elif isinstance(text, dict):
            assert len(text["text"]) <= SLACK_SECTION_TEXT_MAX
            assert text.get("verbatim") is True
    for text in slack_texts(payload):
        if text is not payload["text"]:
            total += len(text)
        for markup in _ANY_MARKUP.findall(text):
            assert _OUR_LINK.fullmatch(markup), f"markup not made by the renderer: {markup!r}"
        assert not re.search(r"(?<![\w@])@(channel|here|everyone)\b", text, re.IGNORECASE)
    assert total <= SLACK_MAX_MESSAGE_CHARS


def assert_telegram_message_is_safe(payload: dict[str, Any]) -> None:
    assert payload["parse_mode"] == "HTML"
    plain, entities = parse_text(payload["text"], "HTML", None)  # raises BadRequest
    assert utf16_len(payload["text"]) <= TELEGRAM_MAX_UTF16
    assert utf16_len(plain) <= TELEGRAM_MAX_UTF16
    for entity in entities:
        if entity.type == "text_link":
            assert entity.url is not None
            assert entity.url.startswith(("http://", "https://"))
    assert not re.search(r"@[A-Za-z0-9_]", plain), "a report @mention would notify"
    markup = payload.get("reply_markup")
    if markup is not None:
        check_reply_markup(markup)
        for row in markup["inline_keyboard"]:
            for button in row:
                section, ref = parse_callback_data(button["callback_data"])
                assert section in (Section.RISKS, Section.FILES)
                assert ref


def assert_text_message_is_safe(payload: dict[str, Any]) -> None:
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", payload["text"])


FORMATS, LOCALES, SECTIONS = list(Format), list(Locale), list(Section)
CHECKS = {
    Format.SLACK: assert_slack_message_is_safe,
    Format.TELEGRAM: assert_telegram_message_is_safe,
    Format.TEXT: assert_text_message_is_safe,
}


def assert_safe(fmt: Format, messages: list[Any]) -> None:
    assert messages
    for message in messages:
        CHECKS[fmt](message.payload)


@pytest.mark.slow  # ~25 s for 10,000 examples (RENDER_SAFETY_EXAMPLES=500 for a quick run)
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
    digest = build_digest(stored, DigestFilter(tags=tuple(tags)), items[0].repo)

    assert_safe(fmt, RENDERER.digest(digest, fmt, locale, date=date(2026, 8, 18)))
    assert_safe(fmt, RENDERER.section(stored[0], section, fmt, locale))
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
