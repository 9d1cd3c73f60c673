"""Feishu/Lark: interactive cards (card JSON 1.0: `header`, `elements` of div, note, hr and
action), within the card's size and element budgets.

Report text reaches a card only through `escape_lark_md` — the Environment's `finalize` applies
it to every printed value that is not already `LarkText` — which writes every character lark_md
reads as markup (`<`, `>`, `&`, `*`, `_`, `~`, `[`, `]`, `(`, `)`, `` ` ``) as an HTML
entity, so `<at id=all></at>`, `**bold**` or `[label](javascript:…)` in a report stay inert text
and never ping a group. Links are made only by the `link` filter, only for http(s) URLs.

Every button and overflow option carries the action data the other platforms carry
(bot/core/render/actions.py): `read:REF`, `report:REF`, `snooze:REF`, `mute:TAG`, `more:KEY`,
and `risks:REF` (a section, as a Telegram button names it).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment

from bot.core.models import Section, Verbosity
from bot.core.render.actions import EntryAction, action_data
from bot.core.render.flow import (
    PART_HEADING_ROOM,
    PlatformRenderer,
    RenderedMessage,
    jinja_environment,
)
from bot.core.render.limits.lark import (
    LARK_CARD_BUDGET_BYTES,
    LARK_CARD_BUDGET_ELEMENTS,
    LARK_HEADER_MAX,
    LARK_VALUE_MAX,
)
from bot.core.render.sections import Block
from bot.core.render.split import ELLIPSIS, Cost, Piece, scrub_surrogates
from bot.core.render.views import EntryView, HeaderView, action_ref, button_tag, link_url

# Room kept in every card for a header or a repeated heading.
LARK_HEADING_BYTES = 1200
LARK_HEADING_ELEMENTS = 3
HEADER_TEMPLATE = "blue"  # the header's colour
DATA_KEY = "data"  # a button's value is an object: {"data": "read:REF"}

_ENTITIES = {char: f"&#{ord(char)};" for char in "*_~[]()`"}
_ENTITIES |= {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_SPECIAL = re.compile("[" + re.escape("".join(_ENTITIES)) + "]")
_LINK = re.compile(r"\[([^\[\]]*)\]\(([^()\s]*)\)")
_NOTE_MACROS = frozenset({"more", "legend", "unread_dropped"})  # small print


class LarkText(str):
    """lark_md that is already escaped (or ours); `finalize` passes it through unchanged."""

    __slots__ = ()


def escape_lark_md(value: Any) -> LarkText:
    """Every lark_md markup character as an entity; nothing else changes."""
    if isinstance(value, LarkText):
        return value
    text = scrub_surrogates(str(value))
    return LarkText(_SPECIAL.sub(lambda found: _ENTITIES[found.group()], text))


def _link(url: str | None, label: str) -> LarkText:
    """`[label](url)` for an http(s) URL (parentheses percent-encoded); else the label."""
    safe = link_url(url)
    if safe is None:
        return escape_lark_md(label)
    target = safe.replace("(", "%28").replace(")", "%29")
    return LarkText(f"[{escape_lark_md(label)}]({target})")


def lark_md_to_plain(text: str) -> str:
    """What a reader sees, for logs: `[label](url)` → `label (url)`, `**` dropped, entities
    decoded."""
    text = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", text).replace("**", "")
    return html.unescape(text)


def _plain(text: str) -> dict[str, str]:
    return {"tag": "plain_text", "content": text or ELLIPSIS}


def _md(text: str) -> dict[str, str]:
    return {"tag": "lark_md", "content": text or "\u200b"}


def _div(text: str) -> dict[str, Any]:
    return {"tag": "div", "text": _md(text)}


def _note(text: str) -> dict[str, Any]:
    return {"tag": "note", "elements": [_md(text)]}


def _button(label: str, data: str, primary: bool = False) -> dict[str, Any]:
    kind = "primary" if primary else "default"
    return {"tag": "button", "text": _plain(label), "type": kind, "value": {DATA_KEY: data}}


def _data(prefix: str, view: EntryView) -> str:
    """`prefix:REF`, the REF cut to the number when the whole would pass LARK_VALUE_MAX."""
    return prefix + ":" + action_ref(view, LARK_VALUE_MAX - len(prefix) - 1)


def _menu(view: EntryView, labels: Mapping[str, str]) -> dict[str, Any]:
    """⋯: Snooze 7d, Mute tag here 7d (when the entry has a tag), Risks."""
    options = [(labels["button_snooze_long"], _data(EntryAction.SNOOZE.value, view))]
    mute = action_data(EntryAction.MUTE, view.tag)
    if view.tag and len(mute.encode()) <= LARK_VALUE_MAX:
        options.append((labels["button_mute_long"].format(tag=button_tag(view.tag)), mute))
    options.append((labels["button_risks"], _data(Section.RISKS.value, view)))
    return {
        "tag": "overflow",
        "options": [{"text": _plain(text), "value": value} for text, value in options],
    }


def card_bytes(elements: Sequence[Mapping[str, Any]]) -> int:
    """What elements weigh in the card's JSON (UTF-8, as sent)."""
    return len(json.dumps(list(elements), ensure_ascii=False).encode())


@dataclass(frozen=True, slots=True)
class LarkChunk:
    elements: tuple[dict[str, Any], ...]
    header: dict[str, Any] | None = None  # a digest's or an answer's card header


class LarkRenderer(PlatformRenderer[LarkChunk]):
    limit = (LARK_CARD_BUDGET_ELEMENTS, LARK_CARD_BUDGET_BYTES)
    separator = (0, 1)  # the comma between two elements

    def make_environment(self, templates_dir: Path) -> Environment:
        return jinja_environment(
            templates_dir / "lark",
            # HTML autoescape is wrong for lark_md (it leaves `*` and `[` live): finalize escapes
            autoescape=False,
            finalize=escape_lark_md,
            filters={"link": _link},
        )

    def cost(self, chunk: LarkChunk) -> Cost:
        header = card_bytes([chunk.header]) if chunk.header else 0
        return (len(chunk.elements), card_bytes(chunk.elements) + header)

    def _within(self, chunk: LarkChunk, elements: int, size: int) -> bool:
        count, weight = self.cost(chunk)
        return count <= elements and weight <= size

    def fits_body(self, chunk: LarkChunk) -> bool:
        elements = LARK_CARD_BUDGET_ELEMENTS - LARK_HEADING_ELEMENTS
        room = LARK_CARD_BUDGET_BYTES - LARK_HEADING_BYTES - PART_HEADING_ROOM
        return self._within(chunk, elements, room)

    def fits_heading(self, chunk: LarkChunk) -> bool:
        title = (chunk.header or {}).get("title", {}).get("content", "")
        return len(title) <= LARK_HEADER_MAX and self._within(
            chunk, LARK_HEADING_ELEMENTS, LARK_HEADING_BYTES
        )

    def _text(self, macro: str, **values: Any) -> str:
        return str(self.macro(macro)(**values)).strip("\n")

    def _header(self, macro: str, **values: Any) -> dict[str, Any]:
        """A card header: plain text, so the escaped title is read back first."""
        title = html.unescape(self._text(macro, **values))
        return {"title": _plain(title), "template": HEADER_TEMPLATE}

    def header_chunk(self, view: HeaderView, labels: Mapping[str, str]) -> LarkChunk:
        note = _note(self._text("header_context", h=view, L=labels))
        return LarkChunk((note,), self._header("header_title", h=view, L=labels))

    def group_chunk(self, label: str, labels: Mapping[str, str]) -> LarkChunk:
        return LarkChunk((_div(self._text("group", label=label, L=labels)),))

    def _sections(self, view: EntryView, labels: Mapping[str, str]) -> dict[str, Any]:
        buttons = [
            _button(labels["button_risks"], _data(Section.RISKS.value, view)),
            _button(labels["button_files"], _data(Section.FILES.value, view)),
        ]
        return {"tag": "action", "actions": buttons}

    def entry_chunk(self, view: EntryView, labels: Mapping[str, str]) -> LarkChunk:
        """The entry's text; under it ✅ Read, 📄 Full report and the ⋯ menu (oneline: Read
        beside the line)."""
        div = _div(self._text("entry", e=view, L=labels))
        if not view.buttons:
            return LarkChunk((div, self._sections(view, labels)))
        read = _button(labels["button_read"], _data(EntryAction.READ.value, view), True)
        if view.verbosity is Verbosity.ONELINE:
            return LarkChunk((div | {"extra": read},))
        report = _button(labels["button_report"], _data(EntryAction.REPORT.value, view))
        actions = {"tag": "action", "actions": [read, report, _menu(view, labels)]}
        return LarkChunk((div, actions))

    def more_chunk(self, n: int, key: str, labels: Mapping[str, str]) -> LarkChunk:
        text = self._text("more", n=n, typed="", L=labels)
        data = action_data(EntryAction.MORE, key)
        if not key or len(data.encode()) > LARK_VALUE_MAX:
            return LarkChunk((_note(text),))
        return LarkChunk((_div(text) | {"extra": _button(labels["button_more"], data)},))

    def text_chunk(self, macro: str, labels: Mapping[str, str], **values: Any) -> LarkChunk:
        text = self._text(macro, L=labels, **values)
        return LarkChunk((_note(text) if macro in _NOTE_MACROS else _div(text),))

    def head_chunk(
        self, view: EntryView, title: str, continued: bool, labels: Mapping[str, str]
    ) -> LarkChunk:
        values = {"e": view, "title": title, "L": labels}
        if continued:
            return LarkChunk((_note(self._text("head_continued", **values)),))
        note = _note(self._text("head_context", **values))
        return LarkChunk((note,), self._header("head_title", **values))

    def block_chunk(self, block: Block, labels: Mapping[str, str]) -> LarkChunk:
        return LarkChunk((_div(self._text(block.kind, b=block, L=labels)),))

    def actions_chunk(self, view: EntryView, labels: Mapping[str, str]) -> LarkChunk:
        return LarkChunk((self._sections(view, labels),))

    def assemble(self, pieces: Sequence[Piece[LarkChunk]]) -> RenderedMessage:
        """One card: the first header a piece brings, then every piece's elements. A shared
        card (`update_multi`): when a button press updates it, everyone sees the update."""
        header = next((p.content.header for p in pieces if p.content.header), None)
        elements = [element for piece in pieces for element in piece.content.elements]
        card: dict[str, Any] = {"config": {"wide_screen_mode": True, "update_multi": True}}
        if header is not None:
            card["header"] = header
        card["elements"] = elements
        lines = [header["title"]["content"]] if header is not None else []
        lines += [lark_md_to_plain(text) for element in elements for text in _texts(element)]
        return RenderedMessage(payload={"card": card}, text="\n".join(lines))


def _texts(element: Mapping[str, Any]) -> list[str]:
    """The lark_md an element shows (a div's text, a note's elements); buttons excluded."""
    if element["tag"] == "div":
        return [element["text"]["content"]]
    if element["tag"] == "note":
        return [inner["content"] for inner in element["elements"]]
    return []
