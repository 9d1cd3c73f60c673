"""What the render golden tests share: the sample reports, the golden update switch, and
the checks the strict fakes apply to every rendered message."""

from __future__ import annotations

import os
from datetime import date

from bot.core.digest.select import Digest
from bot.core.models import Format, Locale
from bot.core.render.limits.slack import SLACK_MAX_BLOCKS
from bot.core.render.limits.telegram import TELEGRAM_MAX_UTF16
from bot.core.render.options import DigestOptions, DigestPart
from bot.core.render.renderer import RenderedMessage, Renderer
from tests.fakes.slack.messages import check_message
from tests.fakes.telegram.html import utf16_len
from tests.fakes.telegram.messages import check_reply_markup, parse_text
from tests.kits.paths import ROOT

SAMPLES = sorted(
    p for p in (ROOT / "examples" / "reports").glob("*") if p.suffix in (".md", ".txt", ".json")
)
DAY = date(2026, 8, 18)
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def check_platform(fmt: Format, messages: list[RenderedMessage]) -> None:
    for message in messages:
        if fmt is Format.SLACK:
            check_message(message.payload, allowed_users=set())
            assert len(message.payload["blocks"]) <= SLACK_MAX_BLOCKS
        elif fmt is Format.TELEGRAM:
            parse_text(message.payload["text"], "HTML", None)
            assert utf16_len(message.payload["text"]) <= TELEGRAM_MAX_UTF16
            check_reply_markup(message.payload.get("reply_markup"))


class RecordingRenderer(Renderer):
    """The real renderer; it also keeps each digest and the options the planner hands it."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[Digest, DigestOptions]] = []

    def digest_parts(
        self,
        digest: Digest,
        fmt: Format,
        locale: Locale,
        *,
        date: date | None = None,
        options: DigestOptions | None = None,
    ) -> list[DigestPart]:
        self.seen.append((digest, options or DigestOptions()))
        return super().digest_parts(digest, fmt, locale, date=date, options=options)

    @property
    def last(self) -> Digest:
        return self.seen[-1][0]

    @property
    def options(self) -> list[DigestOptions]:
        return [options for _, options in self.seen]
