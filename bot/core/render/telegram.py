"""Telegram: HTML parse mode, messages within 4096 UTF-16 units, inline keyboards per entry.

Report text reaches the output only through jinja2's HTML autoescape (plus the `finalize`
hook below, which also defangs `@username` mentions); links are made only by the `link`
filter and only for http(s) URLs. Sizes are measured on the HTML we send — never less than
what Telegram counts after parsing entities — so a message can never be too long.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from jinja2 import Environment
from markupsafe import Markup

from bot.core.models import Section, Verbosity
from bot.core.render.actions import EntryAction, action_data
from bot.core.render.flow import (
    PART_HEADING_ROOM,
    PlatformRenderer,
    RenderedMessage,
    jinja_environment,
    join_texts,
    load_macros,
)
from bot.core.render.limits.telegram import (
    TELEGRAM_MAX_BUTTONS,
    TELEGRAM_MAX_CALLBACK_BYTES,
    TELEGRAM_MAX_ENTITIES,
    TELEGRAM_MAX_UTF16,
)
from bot.core.render.sections import Block
from bot.core.render.split import Cost, Piece, scrub_surrogates, utf16_len
from bot.core.render.views import EntryView, HeaderView, action_ref, button_tag, link_url

# Room kept in every message for a header or a repeated heading ("[rollout]", "(cont.)").
TELEGRAM_HEADING_MAX = 600

# `@` then a name, also across backticks: the `code` filter turns a span's backticks into
# <code> tags that the reader never sees, so "@`name`" reads (and notifies) as "@name".
_MENTION = re.compile(r"@(?=`*[A-Za-z0-9_])")
_TAG = re.compile(r"<[^>]*>")
_WORD_JOINER = "\u2060"
_LANGUAGE = re.compile(r"[A-Za-z0-9_+-]{1,32}")
_CODE_SPAN = re.compile(r"`([^`\n]*[^`\s][^`\n]*)`")
Rows = list[list[dict[str, str]]]  # an inline keyboard's rows, as the Bot API takes them
# Buttons under one digest entry, in one row: Read, Full report and ⋯ (the entry's menu).
TELEGRAM_ENTRY_BUTTONS = 3
# Tags an entry's menu offers to mute, one row each.
TELEGRAM_MENU_TAGS = 3
# Buttons an open menu adds (Snooze, Risks, Back, the mutes): a digest keyboard keeps room.
TELEGRAM_MENU_BUTTONS = 3 + TELEGRAM_MENU_TAGS
REPORT_MARK: Final = "📄"
READ_MARK: Final = "✅"
MENU_MARK: Final = "⋯"
BACK_MARK: Final = "↩"
BACK: Final = "back:"  # an open menu's Back button: `back:REF`
# The longest prefix a REF from `menu:REF` is carried under again (`snooze:REF`).
_MENU_REF_ROOM = TELEGRAM_MAX_CALLBACK_BYTES - len(EntryAction.SNOOZE.value) - 1


def defang_mentions(text: str) -> str:
    """`@name` → `@⁠name` (a word joiner): reads the same, but Telegram no longer sees a
    mention that would notify that user."""
    return _MENTION.sub("@" + _WORD_JOINER, text) if "@" in text else text


def _finalize(value: Any) -> Any:
    if isinstance(value, Markup):
        return value
    return defang_mentions(scrub_surrogates(str(value)))


def _link(url: str | None, label: str) -> Markup:
    """`<a href>` for an http(s) URL; otherwise just the (escaped) label."""
    safe = link_url(url)
    label = label if isinstance(label, Markup) else _finalize(label)  # defang `@name` too
    if safe is None:
        return Markup("{}").format(label)
    return Markup('<a href="{}">{}</a>').format(safe, label)


# What a style wraps the text between code spans in (see _code_spans).
_STYLES: Final = {"i": Markup("<i>{}</i>"), "b": Markup("<b>{}</b>")}


def _code_spans(value: Any, style: str = "") -> Markup:
    """Report text with its `code spans` as <code>…</code>: every part escaped on its own, so
    a span can never open a tag it does not close; an unpaired backtick stays a literal
    backtick. Mentions are defanged on the whole text first: a part alone cannot see that
    its trailing `@` and the next part's first letter read as one `@name`.

    With a `style` ("i", "b"), the text between the spans is set in it and the spans are not:
    the Bot API refuses a code entity inside bold or italic."""
    text = defang_mentions(str(value))
    out: list[Markup] = []
    last = 0

    def plain(part: str) -> Markup:
        escaped = Markup.escape(_finalize(part))
        if not style or not part:
            return escaped
        return _STYLES[style].format(escaped)

    for match in _CODE_SPAN.finditer(text):
        out.append(plain(text[last : match.start()]))
        out.append(Markup("<code>{}</code>").format(_finalize(match.group(1))))
        last = match.end()
    out.append(plain(text[last:]))
    return Markup("").join(out)


def _italic_code_spans(value: Any) -> Markup:
    """Italic report text whose code spans stay upright (see _code_spans)."""
    return _code_spans(value, "i")


def _language(name: str) -> str:
    """A code block's language if it is a plain name (it lands in a class attribute)."""
    return name if _LANGUAGE.fullmatch(name) else ""


def callback_data(section: Section, view: EntryView) -> str:
    """`risks:owner/repo#7422`, or `risks:7422` when that would pass 64 bytes; either way
    the part after the colon is a REF that `/pr` accepts."""
    prefix = f"{section.value}:"
    return prefix + action_ref(view, TELEGRAM_MAX_CALLBACK_BYTES - len(prefix))


def _action_button(text: str, action: EntryAction, view: EntryView) -> dict[str, str]:
    """A digest button carrying `action:REF` (REF shortened to the number to fit 64 bytes)."""
    prefix = f"{action.value}:"
    ref = action_ref(view, TELEGRAM_MAX_CALLBACK_BYTES - len(prefix))
    return {"text": text, "callback_data": action_data(action, ref)}


def pr_label(view: EntryView) -> str:
    """How the entry's buttons name the PR: `#7422`, or `verl#7422` in a multi-repo digest."""
    return view.label or f"#{view.number}"


def fitted_data(prefix: str, ref: str) -> str:
    """`prefix` and REF, or the REF's number alone when that would pass 64 bytes."""
    data = prefix + ref
    if len(data.encode()) <= TELEGRAM_MAX_CALLBACK_BYTES:
        return data
    return prefix + ref.rpartition("#")[2]


def entry_menu(ref: str, label: str, tags: Sequence[str], labels: Mapping[str, str]) -> Rows:
    """An entry's menu, every button naming the PR: `#7422 💤 7d`, `#7422 ⚠ Risks`, `↩ #7422`,
    then one row per tag to mute (`#7422 🔇 rollout 7d`) whose `mute:TAG` fits."""
    snooze = fitted_data(action_data(EntryAction.SNOOZE, ""), ref)
    first = [
        {"text": f"{label} {labels['button_snooze']}", "callback_data": snooze},
        {"text": f"{label} ⚠ {labels['button_risks']}", "callback_data": callback_risks(ref)},
        {"text": f"{BACK_MARK} {label}", "callback_data": fitted_data(BACK, ref)},
    ]
    mutes: Rows = []
    for tag in dict.fromkeys(tag for tag in tags if tag.strip()):
        data = action_data(EntryAction.MUTE, tag)
        if len(data.encode()) <= TELEGRAM_MAX_CALLBACK_BYTES:
            text = f"{label} " + labels["button_mute"].format(tag=button_tag(tag))
            mutes.append([{"text": text, "callback_data": data}])
    return [first, *mutes[:TELEGRAM_MENU_TAGS]]


def callback_risks(ref: str) -> str:
    """`risks:REF`, as the Risks button of a section answer carries it."""
    return fitted_data(f"{Section.RISKS.value}:", ref)


def _data(row: Sequence[Mapping[str, str]]) -> list[str]:
    return [str(button.get("callback_data", "")) for button in row]


def menu_closed(rows: Sequence[Sequence[Mapping[str, str]]]) -> Rows:
    """The keyboard without its open menu: the row holding a Back button goes, and so do the
    mute rows right after it; every other row stays as it was."""
    kept: Rows = []
    in_menu = False
    mute = action_data(EntryAction.MUTE, "")
    for row in rows:
        data = _data(row)
        if any(item.startswith(BACK) for item in data):
            in_menu = True
            continue
        if in_menu and data and all(item.startswith(mute) for item in data):
            continue
        in_menu = False
        kept.append([dict(button) for button in row])
    return kept


def menu_opened(rows: Sequence[Sequence[Mapping[str, str]]], pressed: str, menu: Rows) -> Rows:
    """The keyboard with `menu` under the row of the button carrying `pressed` (a menu open
    elsewhere closes first, so the keyboard never holds more than one)."""
    opened: Rows = []
    for row in menu_closed(rows):
        opened.append(row)
        if pressed in _data(row):
            opened.extend(menu)
    return opened


def menu_is_open(rows: Sequence[Sequence[Mapping[str, str]]], ref: str) -> bool:
    """Whether the keyboard shows the menu of REF (its Back button)."""
    back = fitted_data(BACK, ref)
    return any(back in _data(row) for row in rows)


def pressed_label(rows: Sequence[Sequence[Mapping[str, str]]], pressed: str) -> str | None:
    """The PR a ⋯ button names (`⋯ #7422` → `#7422`); None when no button carries `pressed`."""
    for row in rows:
        for button in row:
            if button.get("callback_data") == pressed:
                return str(button.get("text", "")).removeprefix(MENU_MARK).strip()
    return None


def parse_callback_data(data: str) -> tuple[Section, str]:
    """The inverse of `callback_data`: (section, REF). Raises ValueError if it is not ours."""
    name, _, ref = data.partition(":")
    return Section(name), ref


def html_to_plain(text: str) -> str:
    """What the user reads: tags dropped, entities decoded (all literal `<` are escaped)."""
    return html.unescape(_TAG.sub("", text))


@dataclass(frozen=True, slots=True)
class TelegramChunk:
    html: str
    buttons: tuple[tuple[dict[str, str], ...], ...] = ()  # inline keyboard rows


class TelegramRenderer(PlatformRenderer[TelegramChunk]):
    limit = (
        TELEGRAM_MAX_UTF16,
        TELEGRAM_MAX_ENTITIES,
        TELEGRAM_MAX_BUTTONS - TELEGRAM_MENU_BUTTONS,
    )
    separator = (2, 0, 0)

    def make_environment(self, templates_dir: Path) -> Environment:
        return jinja_environment(
            templates_dir / "telegram",
            autoescape=True,
            finalize=_finalize,
            filters={
                "link": _link,
                "language": _language,
                "code": _code_spans,
                "italic_code": _italic_code_spans,
            },
        )

    def cost(self, chunk: TelegramChunk) -> Cost:
        text = chunk.html
        entities = text.count("<") - text.count("</")  # opening tags: report text has no `<`
        return (utf16_len(text), entities, sum(len(row) for row in chunk.buttons))

    def fits_body(self, chunk: TelegramChunk) -> bool:
        units, entities, buttons = self.cost(chunk)
        room = TELEGRAM_MAX_UTF16 - TELEGRAM_HEADING_MAX - PART_HEADING_ROOM - 2 * self.separator[0]
        fits = units <= room and entities <= TELEGRAM_MAX_ENTITIES // 2
        return fits and buttons <= TELEGRAM_ENTRY_BUTTONS

    def fits_heading(self, chunk: TelegramChunk) -> bool:
        return utf16_len(chunk.html) <= TELEGRAM_HEADING_MAX

    def _render(self, macro: str, **values: Any) -> TelegramChunk:
        return TelegramChunk(str(self.macro(macro)(**values)).strip("\n"))

    def header_chunk(self, view: HeaderView, labels: Mapping[str, str]) -> TelegramChunk:
        return self._render("header", h=view, L=labels)

    def group_chunk(self, label: str, labels: Mapping[str, str]) -> TelegramChunk:
        return self._render("group", label=label, L=labels)

    def _buttons(self, view: EntryView, labels: Mapping[str, str]) -> tuple[dict[str, str], ...]:
        return (
            {
                "text": f"#{view.number} {labels['button_risks']}",
                "callback_data": callback_data(Section.RISKS, view),
            },
            {
                "text": f"#{view.number} {labels['button_files']}",
                "callback_data": callback_data(Section.FILES, view),
            },
        )

    def _entry_buttons(
        self, view: EntryView, labels: Mapping[str, str]
    ) -> tuple[tuple[dict[str, str], ...], ...]:
        """One row, each button naming the PR: `#7422 ✅ Read`, `📄 #7422`, `⋯ #7422` (the
        menu: Snooze, Mute, Risks). Oneline keeps only Read."""
        label = pr_label(view)
        read = _action_button(f"{label} {labels['button_read']}", EntryAction.READ, view)
        if view.verbosity is Verbosity.ONELINE:
            return ((read,),)
        report = _action_button(f"{REPORT_MARK} {label}", EntryAction.REPORT, view)
        menu_ref = action_ref(view, _MENU_REF_ROOM)
        menu = {
            "text": f"{MENU_MARK} {label}",
            "callback_data": action_data(EntryAction.MENU, menu_ref),
        }
        return ((read, report, menu),)

    def entry_chunk(self, view: EntryView, labels: Mapping[str, str]) -> TelegramChunk:
        rendered = self._render("entry", e=view, L=labels)
        if view.buttons:
            return TelegramChunk(rendered.html, self._entry_buttons(view, labels))
        return TelegramChunk(rendered.html, (self._buttons(view, labels),))

    def result_chunk(self, view: EntryView, labels: Mapping[str, str]) -> TelegramChunk:
        """A search result: its line (results.j2) and one keyboard row, `📄 #7422` (Full
        report) and `✅ #7422` (Read), carrying the digest's `report:REF` and `read:REF`."""
        html = str(load_macros(self.env, "results.j2").result(e=view, L=labels)).strip("\n")
        label = pr_label(view)
        report = _action_button(f"{REPORT_MARK} {label}", EntryAction.REPORT, view)
        read = _action_button(f"{READ_MARK} {label}", EntryAction.READ, view)
        return TelegramChunk(html, ((report, read),))

    def more_chunk(self, n: int, key: str, labels: Mapping[str, str]) -> TelegramChunk:
        typed = labels["more_typed"].format(cmd="/") if key else ""
        rendered = self._render("more", n=n, typed=typed, L=labels)
        data = action_data(EntryAction.MORE, key)
        if not key or len(data.encode()) > TELEGRAM_MAX_CALLBACK_BYTES:
            return rendered
        button = {"text": labels["button_more"], "callback_data": data}
        return TelegramChunk(rendered.html, ((button,),))

    def text_chunk(self, macro: str, labels: Mapping[str, str], **values: Any) -> TelegramChunk:
        return self._render(macro, L=labels, **values)

    def head_chunk(
        self, view: EntryView, title: str, continued: bool, labels: Mapping[str, str]
    ) -> TelegramChunk:
        return self._render("head", e=view, title=title, continued=continued, L=labels)

    def block_chunk(self, block: Block, labels: Mapping[str, str]) -> TelegramChunk:
        return self._render(block.kind, b=block, L=labels)

    def actions_chunk(self, view: EntryView, labels: Mapping[str, str]) -> TelegramChunk:
        return TelegramChunk("", (self._buttons(view, labels),))

    def assemble(self, pieces: Sequence[Piece[TelegramChunk]]) -> RenderedMessage:
        text = join_texts(pieces, lambda chunk: chunk.html)
        rows = [list(row) for piece in pieces for row in piece.content.buttons]
        payload: dict[str, Any] = {
            "text": text,
            "parse_mode": "HTML",
            "link_preview_options": {"is_disabled": True},
        }
        if rows:
            payload["reply_markup"] = {"inline_keyboard": rows}
        return RenderedMessage(payload=payload, text=functools.partial(html_to_plain, text))
