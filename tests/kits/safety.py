"""Hostile reports and the checks every rendered message must pass: what the fake Slack and
Telegram APIs refuse, plus the platform limits the renderers promise. Used by the render
safety test and the fault suite."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from bot.core.models import Format, Locale, Section
from bot.core.render.actions import parse_action
from bot.core.render.limits.slack import (
    SLACK_HEADER_MAX,
    SLACK_MAX_BLOCKS,
    SLACK_MAX_MESSAGE_CHARS,
    SLACK_SECTION_TEXT_MAX,
)
from bot.core.render.limits.telegram import TELEGRAM_MAX_UTF16
from bot.core.render.renderer import Renderer
from bot.core.render.telegram import parse_callback_data
from bot.core.reports.model import (
    ImpactLevel,
    KeyFile,
    RecommendationLevel,
    RelatedPR,
    Report,
    Snippet,
)
from tests.fakes.lark.cards import check_card
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
    repo = f"{owner}/{deck.choice(['verl', '<@U1>', 'r'])}"
    title = deck.text() or "t"
    report = Report(
        repo="verl-project/verl",
        number=1 + deck.byte() * 65_537,
        title="t",
        url=deck.choice(URLS),
        merged_at=deck.choice([None, datetime(2026, 8, 17, 12, 51, tzinfo=UTC)]),
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
    # The parser refuses such a repo (or a blank title) now, but a row stored by an older
    # version still renders: set them past validation, as the store reads rows back.
    return report.model_copy(update={"repo": repo, "title": title})


# --- the checks every rendered message must pass ---------------------------------------------

# our links: the PR (`#7422`, `verl#7422`), a URL shown as itself, the full report's label
_OUR_LINK = re.compile(
    r"<(https?://[^<>|\s]+)\|([A-Za-z0-9_.-]*#[0-9]+|https?://[^<>|\s]+|原文链接|full report)>"
)
_ANY_MARKUP = re.compile(r"<[^<>]*>")


def slack_texts(payload: dict[str, Any]) -> Iterator[str]:
    yield payload["text"]
    for block in payload["blocks"]:
        text = block.get("text")
        if isinstance(text, dict):
            yield text["text"]
        for element in block.get("elements", ()):
            inner = element.get("text")
            if inner is not None:  # an overflow menu has options, not a text
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
                data = button["callback_data"]
                if parse_action(data) is not None:  # a digest button: read:REF, mute:TAG…
                    continue
                section, ref = parse_callback_data(data)
                assert section in (Section.RISKS, Section.FILES)
                assert ref


def assert_text_message_is_safe(payload: dict[str, Any]) -> None:
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", payload["text"])


def assert_lark_message_is_safe(payload: dict[str, Any]) -> None:
    """A card the strict fake accepts (its tags, nesting and size), without control
    characters or a live mention in what it shows."""
    content = json.dumps(payload["card"], ensure_ascii=False)
    check_card(content)
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", content.replace("\\n", ""))
    assert "<at " not in content, "a report's <at> would notify"


FORMATS, LOCALES, SECTIONS = list(Format), list(Locale), list(Section)
CHECKS = {
    Format.LARK: assert_lark_message_is_safe,
    Format.SLACK: assert_slack_message_is_safe,
    Format.TELEGRAM: assert_telegram_message_is_safe,
    Format.TEXT: assert_text_message_is_safe,
}


def assert_safe(fmt: Format, messages: list[Any]) -> None:
    assert messages
    for message in messages:
        CHECKS[fmt](message.payload)
