"""Slack: Block Kit messages with a fallback `text`, within Slack's block and size limits.

Report text reaches the output only through `escape_mrkdwn` — the Environment's `finalize`
applies it to every printed value that is not already `SlackText` — which escapes `&`, `<`,
`>` (and nothing else: HTML autoescape would show `&#39;`) and defangs a literal `@here`.
Every mrkdwn text object is `verbatim`, and `link_names`/`parse` are never sent, so
`<!channel>`, `<@U1>` or `<https://evil|label>` in a report stay inert text. Links are made
only by the `link` filter and only for http(s) URLs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment

from bot.core.models import Verbosity
from bot.core.render.actions import ENTRY_ACTION_PREFIX, EntryAction, action_data
from bot.core.render.flow import (
    PART_HEADING_ROOM,
    PlatformRenderer,
    RenderedMessage,
    jinja_environment,
    load_macros,
)
from bot.core.render.limits.slack import (
    SLACK_BUTTON_VALUE_MAX,
    SLACK_FALLBACK_MAX,
    SLACK_HEADER_MAX,
    SLACK_MAX_BLOCKS,
    SLACK_MAX_MESSAGE_CHARS,
    SLACK_OPTION_TEXT_MAX,
    SLACK_OPTION_VALUE_MAX,
    SLACK_SECTION_TEXT_MAX,
)
from bot.core.render.sections import Block
from bot.core.render.split import ELLIPSIS, Cost, Piece, cut_to_fit, scrub_surrogates, utf16_len
from bot.core.render.views import EntryView, HeaderView, action_ref, button_tag, link_url

# Room kept in every message for a header or a repeated heading.
SLACK_HEADING_MAX = 600
SLACK_HEADING_BLOCKS = 3

_BROADCAST = re.compile(r"@(?=(?:channel|here|everyone)\b)", re.IGNORECASE)
_LINK = re.compile(r"<([^<>|]*)\|([^<>]*)>")
_ZERO_WIDTH_SPACE = "\u200b"
_CONTEXT_MACROS = frozenset({"more", "legend", "unread_dropped"})  # small print


class SlackText(str):
    """mrkdwn that is already escaped (or ours); `finalize` passes it through unchanged."""

    __slots__ = ()


def escape_mrkdwn(value: Any) -> SlackText:
    """Escape `&`, `<`, `>` and defang `@channel`/`@here`/`@everyone`; nothing else changes."""
    if isinstance(value, SlackText):
        return value
    text = scrub_surrogates(str(value))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if "@" in text:
        text = _BROADCAST.sub("@" + _ZERO_WIDTH_SPACE, text)
    return SlackText(text)


def _link(url: str | None, label: str) -> SlackText:
    """`<url|label>` for an http(s) URL without `|`, `<`, `>`; else the escaped label."""
    safe = link_url(url)
    if safe is None:
        return escape_mrkdwn(label)
    return SlackText(f"<{safe.replace('&', '&amp;')}|{escape_mrkdwn(label)}>")


def _unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def mrkdwn_to_plain(text: str) -> str:
    """What a reader sees, for logs: `<url|label>` → `label (url)`, entities decoded."""
    return _unescape(_LINK.sub(lambda m: f"{m.group(2)} ({m.group(1)})", text))


def block_texts(block: Mapping[str, Any]) -> Iterator[str]:
    """Every text a block carries (header, section, context elements, button labels)."""
    text = block.get("text")
    if isinstance(text, dict):
        yield text["text"]
    for element in block.get("elements", ()):
        inner = element.get("text")
        if inner is not None:  # an overflow menu has options, not a text
            yield inner["text"] if isinstance(inner, dict) else inner


def blocks_chars(blocks: Sequence[Mapping[str, Any]]) -> int:
    """The characters that count toward Slack's per-message total."""
    return sum(utf16_len(text) for block in blocks for text in block_texts(block))


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text or _ZERO_WIDTH_SPACE, "verbatim": True}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": _mrkdwn(text)}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [_mrkdwn(text)]}


def _header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": text or ELLIPSIS}}


def _button(label: str, action_id: str, value: str) -> dict[str, Any]:
    text = {"type": "plain_text", "text": label}
    return {"type": "button", "text": text, "action_id": action_id, "value": value}


def _entry_button(label: str, action: EntryAction, view: EntryView) -> dict[str, Any]:
    """A digest button: action_id `entry:read`…, value `read:REF`."""
    ref = action_ref(view, SLACK_BUTTON_VALUE_MAX - len(action.value) - 1)
    return _button(label, ENTRY_ACTION_PREFIX + action.value, action_data(action, ref))


def _option(text: str, value: str) -> dict[str, Any]:
    return {"text": {"type": "plain_text", "text": text[:SLACK_OPTION_TEXT_MAX]}, "value": value}


def _later(view: EntryView, labels: Mapping[str, str]) -> dict[str, Any]:
    """Snooze 7d and Mute tag here 7d: an overflow menu (action_id `entry:menu`) whose option
    values are `snooze:REF` and `mute:TAG`; a snooze button alone when the tag does not fit an
    option's value (an overflow needs two options)."""
    room = SLACK_OPTION_VALUE_MAX - len(EntryAction.SNOOZE.value) - 1
    snooze = action_data(EntryAction.SNOOZE, action_ref(view, room))
    mute = action_data(EntryAction.MUTE, view.tag)
    if not view.tag or len(mute) > SLACK_OPTION_VALUE_MAX:
        return _entry_button(labels["button_snooze"], EntryAction.SNOOZE, view)
    options = [
        _option(labels["button_snooze_long"], snooze),
        _option(labels["button_mute_long"].format(tag=button_tag(view.tag)), mute),
    ]
    return {"type": "overflow", "action_id": ENTRY_ACTION_PREFIX + "menu", "options": options}


@dataclass(frozen=True, slots=True)
class SlackChunk:
    blocks: tuple[dict[str, Any], ...]
    fallback: str = ""  # plain (unescaped) line for the notification text


class SlackRenderer(PlatformRenderer[SlackChunk]):
    limit = (SLACK_MAX_BLOCKS, SLACK_MAX_MESSAGE_CHARS)
    separator = (0, 1)  # merging two sections adds a line break

    def make_environment(self, templates_dir: Path) -> Environment:
        return jinja_environment(
            templates_dir / "slack",
            # HTML autoescape is wrong for mrkdwn (it would show &#39;): finalize escapes instead
            autoescape=False,
            finalize=escape_mrkdwn,
            filters={
                "escape_mrkdwn": escape_mrkdwn,
                "link": _link,
            },
        )

    def cost(self, chunk: SlackChunk) -> Cost:
        return (len(chunk.blocks), blocks_chars(chunk.blocks))

    def _within(self, chunk: SlackChunk, blocks: int, chars: int) -> bool:
        for block in chunk.blocks:
            limit = SLACK_HEADER_MAX if block["type"] == "header" else SLACK_SECTION_TEXT_MAX
            if any(utf16_len(text) > limit for text in block_texts(block)):
                return False
        return len(chunk.blocks) <= blocks and blocks_chars(chunk.blocks) <= chars

    def fits_body(self, chunk: SlackChunk) -> bool:
        blocks = SLACK_MAX_BLOCKS - SLACK_HEADING_BLOCKS
        room = SLACK_MAX_MESSAGE_CHARS - SLACK_HEADING_MAX - PART_HEADING_ROOM - 2
        return self._within(chunk, blocks, room)

    def fits_heading(self, chunk: SlackChunk) -> bool:
        return self._within(chunk, SLACK_HEADING_BLOCKS, SLACK_HEADING_MAX)

    def _text(self, macro: str, **values: Any) -> str:
        return str(self.macro(macro)(**values)).strip("\n")

    def header_chunk(self, view: HeaderView, labels: Mapping[str, str]) -> SlackChunk:
        title = self._text("header_title", h=view, L=labels)
        blocks = (_header(title), _context(self._text("header_context", h=view, L=labels)))
        return SlackChunk(blocks, _unescape(title))

    def group_chunk(self, label: str, labels: Mapping[str, str]) -> SlackChunk:
        return SlackChunk((_section(self._text("group", label=label, L=labels)),))

    def _actions(self, view: EntryView, labels: Mapping[str, str]) -> dict[str, Any]:
        value = action_ref(view, SLACK_BUTTON_VALUE_MAX)
        buttons = [
            _button(labels["button_risks"], "pr_risks", value),
            _button(labels["button_files"], "pr_files", value),
        ]
        return {"type": "actions", "elements": buttons}

    def _entry_actions(self, view: EntryView, labels: Mapping[str, str]) -> dict[str, Any]:
        """✅ Read, 📄 Full report, Risks, Files, then the ⋯ menu (Snooze, Mute)."""
        buttons = [
            _entry_button(labels["button_read"], EntryAction.READ, view),
            _entry_button(labels["button_report"], EntryAction.REPORT, view),
            *self._actions(view, labels)["elements"],
            _later(view, labels),
        ]
        return {"type": "actions", "elements": buttons}

    def entry_chunk(self, view: EntryView, labels: Mapping[str, str]) -> SlackChunk:
        text = self._text("entry", e=view, L=labels)
        fallback = f"{view.label} {view.title}"
        if not view.buttons:
            return SlackChunk((_section(text), self._actions(view, labels)), fallback)
        if view.verbosity is Verbosity.ONELINE:  # one block per PR: Read as the section's accessory
            section = _section(text) | {
                "accessory": _entry_button(labels["button_read"], EntryAction.READ, view)
            }
            return SlackChunk((section,), fallback)
        return SlackChunk((_section(text), self._entry_actions(view, labels)), fallback)

    def result_chunk(self, view: EntryView, labels: Mapping[str, str]) -> SlackChunk:
        """A search result: its line (results.j2), then 📄 Full report and ✅ Read, the
        digest's own buttons (`entry:report`/`report:REF`, `entry:read`/`read:REF`), so the
        digest's handlers answer them."""
        text = str(load_macros(self.env, "results.j2").result(e=view, L=labels)).strip("\n")
        buttons = [
            _entry_button(labels["button_report"], EntryAction.REPORT, view),
            _entry_button(labels["button_read"], EntryAction.READ, view),
        ]
        actions = {"type": "actions", "elements": buttons}
        fallback = _unescape(_LINK.sub(lambda link: link.group(2), text))  # no URLs
        return SlackChunk((_section(text), actions), fallback)

    def more_chunk(self, n: int, key: str, labels: Mapping[str, str]) -> SlackChunk:
        typed = labels["more_typed"].format(cmd="/pr ") if key else ""
        text = self._text("more", n=n, typed=typed, L=labels)
        if not key or len(action_data(EntryAction.MORE, key)) > SLACK_BUTTON_VALUE_MAX:
            return SlackChunk((_context(text),), mrkdwn_to_plain(text))
        button = _button(
            labels["button_more"],
            ENTRY_ACTION_PREFIX + EntryAction.MORE.value,
            action_data(EntryAction.MORE, key),
        )
        return SlackChunk((_section(text) | {"accessory": button},), mrkdwn_to_plain(text))

    def text_chunk(self, macro: str, labels: Mapping[str, str], **values: Any) -> SlackChunk:
        text = self._text(macro, L=labels, **values)
        block = _context(text) if macro in _CONTEXT_MACROS else _section(text)
        return SlackChunk((block,), mrkdwn_to_plain(text))

    def head_chunk(
        self, view: EntryView, title: str, continued: bool, labels: Mapping[str, str]
    ) -> SlackChunk:
        values = {"e": view, "title": title, "L": labels}
        fallback = f"#{view.number} {view.title} · {title}"
        if continued:
            return SlackChunk((_context(self._text("head_continued", **values)),), fallback)
        blocks = (
            _header(self._text("head_title", **values)),
            _context(self._text("head_context", **values)),
        )
        return SlackChunk(blocks, fallback)

    def block_chunk(self, block: Block, labels: Mapping[str, str]) -> SlackChunk:
        return SlackChunk((_section(self._text(block.kind, b=block, L=labels)),))

    def actions_chunk(self, view: EntryView, labels: Mapping[str, str]) -> SlackChunk:
        return SlackChunk((self._actions(view, labels),))

    def assemble(self, pieces: Sequence[Piece[SlackChunk]]) -> RenderedMessage:
        blocks: list[dict[str, Any]] = []
        fallback: list[str] = []
        previous: Piece[SlackChunk] | None = None
        for piece in pieces:
            incoming = list(piece.content.blocks)
            joins = piece.tight or (previous is not None and previous.keep_with_next)
            if joins and blocks and _mergeable(blocks[-1], incoming[0]):
                merged = blocks[-1]["text"]["text"] + "\n" + incoming[0]["text"]["text"]
                blocks[-1] = _section(merged)
                incoming = incoming[1:]
            blocks += incoming
            if piece.content.fallback:
                fallback.append(piece.content.fallback)
            previous = piece
        shown = [block for block in blocks if block["type"] != "actions"]
        plain = "\n".join(mrkdwn_to_plain(t) for b in shown for t in block_texts(b))
        payload = {
            "text": _fallback_text("\n".join(fallback)),
            "blocks": blocks,
            "unfurl_links": False,
            "unfurl_media": False,
        }
        return RenderedMessage(payload=payload, text=plain)


def _mergeable(last: Mapping[str, Any], incoming: Mapping[str, Any]) -> bool:
    if last["type"] != "section" or incoming["type"] != "section":
        return False
    if "accessory" in last or "accessory" in incoming:
        return False
    size = utf16_len(last["text"]["text"]) + 1 + utf16_len(incoming["text"]["text"])
    return size <= SLACK_SECTION_TEXT_MAX


def _fallback_text(plain: str) -> str:
    """The notification text: the message's plain summary, cut before escaping, escaped."""
    cut = cut_to_fit(plain, lambda t: utf16_len(escape_mrkdwn(t)) <= SLACK_FALLBACK_MAX)
    return escape_mrkdwn(cut if cut is not None else ELLIPSIS)
