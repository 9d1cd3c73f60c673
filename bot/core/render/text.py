"""Plain text for the console and logs: no markup, nothing that drives a terminal.

The only "escape" is dropping control characters (ESC sequences could rewrite the screen);
report text is otherwise printed as it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment

from bot.core.render.flow import (
    PART_HEADING_ROOM,
    PlatformRenderer,
    RenderedMessage,
    jinja_environment,
    join_texts,
)
from bot.core.render.sections import Block
from bot.core.render.split import Cost, Piece, scrub_surrogates
from bot.core.render.views import EntryView, HeaderView

# No platform limit; messages stay a readable size in a log line or a terminal page.
TEXT_MAX_CHARS = 20_000
TEXT_HEADING_MAX = 600

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape_text(value: Any) -> str:
    """Report text for a terminal: control characters (but newlines and tabs) dropped."""
    text = scrub_surrogates(str(value))
    return _CONTROL.sub("", text)


class TextRenderer(PlatformRenderer[str]):
    limit = (TEXT_MAX_CHARS,)
    separator = (2,)

    def make_environment(self, templates_dir: Path) -> Environment:
        # Plain text, not HTML: finalize drops control characters instead.
        return jinja_environment(templates_dir / "text", autoescape=False, finalize=escape_text)

    def cost(self, chunk: str) -> Cost:
        return (len(chunk),)

    def fits_body(self, chunk: str) -> bool:
        room = TEXT_MAX_CHARS - TEXT_HEADING_MAX - PART_HEADING_ROOM - 2 * self.separator[0]
        return len(chunk) <= room

    def fits_heading(self, chunk: str) -> bool:
        return len(chunk) <= TEXT_HEADING_MAX

    def _render(self, macro: str, **values: Any) -> str:
        return str(self.macro(macro)(**values)).strip("\n")

    def header_chunk(self, view: HeaderView, labels: Mapping[str, str]) -> str:
        return self._render("header", h=view, L=labels)

    def group_chunk(self, label: str, labels: Mapping[str, str]) -> str:
        return self._render("group", label=label, L=labels)

    def entry_chunk(self, view: EntryView, labels: Mapping[str, str]) -> str:
        return self._render("entry", e=view, L=labels)

    def text_chunk(self, macro: str, labels: Mapping[str, str], **values: Any) -> str:
        return self._render(macro, L=labels, **values)

    def head_chunk(
        self, view: EntryView, title: str, continued: bool, labels: Mapping[str, str]
    ) -> str:
        return self._render("head", e=view, title=title, continued=continued, L=labels)

    def block_chunk(self, block: Block, labels: Mapping[str, str]) -> str:
        return self._render(block.kind, b=block, L=labels)

    def actions_chunk(self, view: EntryView, labels: Mapping[str, str]) -> None:
        return None

    def assemble(self, pieces: Sequence[Piece[str]]) -> RenderedMessage:
        text = join_texts(pieces, lambda chunk: chunk)
        return RenderedMessage(payload={"text": text}, text=text)
