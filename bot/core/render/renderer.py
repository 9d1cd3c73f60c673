"""Digests, `/pr` sections and notices as ready-to-send messages for Slack, Telegram, Lark and
text.

One jinja2 Environment per platform (StrictUndefined; that platform's escape is the only way
report text reaches output), templates under `templates/{slack,telegram,lark,text}/`, labels in
`zh` and `en`. Output that does not fit a platform's limits is split between entries.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from bot.core.digest.select import Digest, StoredReport
from bot.core.models import Format, Layout, Locale, Section
from bot.core.render.compose import DigestComposer
from bot.core.render.flow import PlatformRenderer, RenderedMessage
from bot.core.render.labels import notice_text
from bot.core.render.lark import LarkRenderer
from bot.core.render.options import DigestOptions, DigestPart
from bot.core.render.sections import Block
from bot.core.render.slack import SlackRenderer
from bot.core.render.telegram import TelegramRenderer
from bot.core.render.text import TextRenderer
from bot.core.reports.model import Report

__all__ = ["RenderedMessage", "Renderer", "default_templates_dir"]


class TemplatesNotFoundError(FileNotFoundError):
    """The templates directory is missing (an install without the repo's `templates/`)."""


def default_templates_dir() -> Path:
    """The installed package's copy (a wheel carries the repo's `templates/` as
    `bot/templates/`), else the checkout's `templates/` (an editable install or a checkout),
    else `./templates`."""
    package = Path(__file__).resolve().parents[2]  # bot/
    candidates = [package / "templates", package.parent / "templates", Path.cwd() / "templates"]
    for candidate in candidates:
        if (candidate / "telegram" / "digest.j2").is_file():
            return candidate
    tried = ", ".join(str(candidate) for candidate in candidates)
    raise TemplatesNotFoundError(f"templates directory not found (tried {tried})")


class Renderer:
    """Renders for every format; environments are built once, on first use of a format."""

    def __init__(self, templates_dir: Path | None = None) -> None:
        self.templates_dir = templates_dir or default_templates_dir()
        self._platforms: dict[Format, PlatformRenderer[Any]] = {}

    def _platform(self, fmt: Format) -> PlatformRenderer[Any]:
        platform = self._platforms.get(fmt)
        if platform is None:
            kinds: dict[Format, type[PlatformRenderer[Any]]] = {
                Format.TEXT: TextRenderer,
                Format.SLACK: SlackRenderer,
                Format.TELEGRAM: TelegramRenderer,
                Format.LARK: LarkRenderer,
            }
            platform = kinds[Format(fmt)](self.templates_dir)
            self._platforms[fmt] = platform
        return platform

    def digest(
        self,
        digest: Digest,
        fmt: Format,
        locale: Locale,
        *,
        date: date | None = None,
        options: DigestOptions | None = None,
    ) -> list[RenderedMessage]:
        """The digest as one or more messages (split between entries), laid out flat."""
        options = dataclasses.replace(options or DigestOptions(), layout=Layout.FLAT)
        return self.digest_parts(digest, fmt, locale, date=date, options=options)[0].messages

    def digest_parts(
        self,
        digest: Digest,
        fmt: Format,
        locale: Locale,
        *,
        date: date | None = None,
        options: DigestOptions | None = None,
    ) -> list[DigestPart]:
        """The digest as the layout posts it: one part (flat: header, synthesis, still unread,
        groups, "+N more", legend), or a summary (header, group counts, synthesis, still
        unread, "+N more", legend) and a part per tag group with only its `[tag]` heading
        (threaded, topics). Every part's messages fit the platform's limits."""
        composer = DigestComposer(
            self._platform(fmt), digest, Locale(locale), date, options or DigestOptions()
        )
        return [DigestPart(p.key, p.label, p.messages) for p in composer.parts()]

    def section(
        self, item: StoredReport | Report, section: Section, fmt: Format, locale: Locale
    ) -> list[RenderedMessage]:
        """A `/pr` answer: one section of a report (`full` for all), split as needed."""
        return self._platform(fmt).section(item, Section(section), Locale(locale))

    def report_pages(
        self, item: StoredReport | Report, fmt: Format, locale: Locale
    ) -> list[RenderedMessage]:
        """The whole report for the Full report button: a new message at each section
        boundary (Telegram replies with them; a Slack modal shows one message's blocks a
        page)."""
        return self._platform(fmt).report_pages(item, Locale(locale))

    def titled_blocks(
        self,
        item: StoredReport | Report,
        title: str,
        blocks: Sequence[Block],
        fmt: Format,
        locale: Locale,
    ) -> list[RenderedMessage]:
        """Some blocks of a report under a head naming the PR and `title`, split to fit."""
        return self._platform(fmt).titled_blocks(item, title, blocks, Locale(locale))

    def notice(self, key: str, fmt: Format, locale: Locale, **params: str) -> RenderedMessage:
        """A small bot message from the labels table; `params` are escaped like report text."""
        text = notice_text(key, Locale(locale), params)
        return self._platform(fmt).notice(text, Locale(locale))
