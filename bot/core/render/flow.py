"""The rendering flow every platform shares: views → fitted chunks → pieces → messages.

A platform renderer (Slack, Telegram, text) supplies the chunks — each rendered by its own
jinja2 templates, in its own Environment — what a chunk costs against the platform's limits,
and how a packed list of chunks becomes one message payload.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from bot.core.digest.select import DigestEntry, StoredReport
from bot.core.models import Locale, Section
from bot.core.render.labels import labels
from bot.core.render.sections import CUTTABLE_BLOCK_FIELDS, SPLITTABLE_KINDS, Block, section_blocks
from bot.core.render.split import ELLIPSIS, Cost, FitError, Piece, cut_to_fit, pack, split_to_fit
from bot.core.render.views import (
    CUTTABLE_ENTRY_FIELDS,
    EntryStyle,
    EntryView,
    HeaderView,
    SynthLine,
    as_stored,
    entry_view,
    link_url,
    matched_names,
)
from bot.core.reports.model import Report

C = TypeVar("C")
V = TypeVar("V")

_ENTRY_CACHE_SIZE = 4096
# A message that continues a section opens with the repeated head and, when a part heading
# ("▌Key files") had to move along with its first block, that heading too: body chunks leave
# room for both (part headings are our labels, far shorter than this).
PART_HEADING_ROOM = 100
# What a split block's frame (label, note, path) leaves for its text: 64 `&`, the character
# that costs most on every platform (5 units as `&amp;`), so any piece of text has room.
FRAME_TEXT_ROOM = "&" * 64


class RenderedMessage:
    """One message to send: the platform's API arguments (without the destination), a
    plain-text version for logs and the console, and the reports (seqs) whose digest entries
    it holds. The plain text may be given as a function, called when it is first read: a
    tick renders tens of thousands of messages and reads the text of none of them."""

    __slots__ = ("_text", "payload", "shows")

    def __init__(
        self, payload: dict[str, Any], text: str | Callable[[], str], shows: tuple[int, ...] = ()
    ) -> None:
        self.payload = payload
        self._text = text
        self.shows = shows

    @property
    def text(self) -> str:
        if not isinstance(self._text, str):
            self._text = self._text()
        return self._text

    def showing(self, shows: tuple[int, ...]) -> RenderedMessage:
        """The same message, holding the entries of `shows` (its text still not worked out)."""
        return RenderedMessage(self.payload, self._text, shows)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RenderedMessage):
            return NotImplemented
        return (self.payload, self.text, self.shows) == (other.payload, other.text, other.shows)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = f"payload={self.payload!r}, text={self.text!r}, shows={self.shows!r}"
        return f"RenderedMessage({shown})"


def _shown(message: Sequence[Piece[Any]]) -> Iterator[int]:
    """The reports (seqs) whose entries a packed message holds, in order."""
    return (piece.shows for piece in message if piece.shows is not None)


def _with(obj: V, name: str, text: str) -> V:
    return dataclasses.replace(obj, **{name: text})  # type: ignore[type-var]


def fit_fields(obj: V, names: Sequence[str], fits: Callable[[V], bool]) -> V:
    """Cut the longest text fields of a view (a dataclass) with "…" until it fits."""
    if fits(obj):
        return obj
    for name in sorted(names, key=lambda name: -len(getattr(obj, name))):
        if not getattr(obj, name):
            continue
        base = obj
        cut = cut_to_fit(getattr(base, name), lambda text: fits(_with(base, name, text)))  # noqa: B023
        obj = _with(base, name, ELLIPSIS if cut is None else cut)
        if cut is not None:
            return obj
    if not fits(obj):
        raise FitError(f"{type(obj).__name__} does not fit even with every text field cut")
    return obj


def join_texts(pieces: Sequence[Piece[C]], text_of: Callable[[C], str]) -> str:
    """Join the pieces' texts: a blank line between pieces, a line break after a heading or
    before a `tight` piece; pieces with no text (a keyboard only) add nothing."""
    parts: list[str] = []
    previous: Piece[C] | None = None
    for piece in pieces:
        text = text_of(piece.content)
        if not text:
            continue
        if parts:
            tight = piece.tight or (previous is not None and previous.keep_with_next)
            parts.append("\n" if tight else "\n\n")
        parts.append(text)
        previous = piece
    return "".join(parts)


def jinja_environment(
    folder: Path,
    *,
    autoescape: bool,
    finalize: Callable[[Any], Any],
    filters: Mapping[str, Callable[..., Any]] | None = None,
) -> Environment:
    """The one recipe for a platform's Environment; a platform passes only its escaping
    (`autoescape` and/or `finalize`) and its own filters (`link_ok`, whether a URL may be
    linked, is everyone's). StrictUndefined makes a misspelt variable fail in the tests instead
    of rendering as nothing."""
    env = Environment(
        loader=FileSystemLoader(folder),
        autoescape=autoescape,  # noqa: S701 - each platform says why it is off (its finalize escapes)
        undefined=StrictUndefined,
        finalize=finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters["link_ok"] = lambda url: link_url(url) is not None
    env.filters.update(filters or {})
    return env


def load_macros(env: Environment, name: str) -> Any:
    """A template's macros, callable from Python (`module.entry(e=..., L=...)`)."""
    return env.get_template(name).module


class PlatformRenderer(ABC, Generic[C]):
    """Shared flow; subclasses render chunks with their templates and assemble payloads."""

    limit: Cost  # a whole message
    separator: Cost  # what joining two chunks may cost at most

    def __init__(self, templates_dir: Path) -> None:
        self.env = self.make_environment(templates_dir)
        self.digest_macros = load_macros(self.env, "digest.j2")
        self.section_macros = load_macros(self.env, "section.j2")
        self.notice_macros = load_macros(self.env, "notice.j2")
        self._entries: dict[tuple[Any, ...], tuple[Report, Piece[C]]] = {}
        self._headings: dict[tuple[str, Locale], Piece[C]] = {}
        self._per_locale: dict[tuple[str, Locale], Piece[C]] = {}

    # --- what each platform provides -------------------------------------------------------
    @abstractmethod
    def make_environment(self, templates_dir: Path) -> Environment: ...

    @abstractmethod
    def cost(self, chunk: C) -> Cost: ...

    @abstractmethod
    def fits_body(self, chunk: C) -> bool:
        """Whether a chunk fits in a message after a repeated heading."""

    @abstractmethod
    def fits_heading(self, chunk: C) -> bool:
        """Whether a chunk is small enough to be a header or a repeated heading."""

    @abstractmethod
    def header_chunk(self, view: HeaderView, labels: Mapping[str, str]) -> C: ...

    @abstractmethod
    def group_chunk(self, label: str, labels: Mapping[str, str]) -> C: ...

    @abstractmethod
    def entry_chunk(self, view: EntryView, labels: Mapping[str, str]) -> C: ...

    @abstractmethod
    def text_chunk(self, macro: str, labels: Mapping[str, str], **values: Any) -> C:
        """A chunk from a macro that takes no report view (`more`, `empty`, notices)."""

    @abstractmethod
    def head_chunk(
        self, view: EntryView, title: str, continued: bool, labels: Mapping[str, str]
    ) -> C: ...

    @abstractmethod
    def block_chunk(self, block: Block, labels: Mapping[str, str]) -> C: ...

    @abstractmethod
    def actions_chunk(self, view: EntryView, labels: Mapping[str, str]) -> C | None:
        """The Risks/Files buttons under a summary card, where the platform has buttons."""

    @abstractmethod
    def assemble(self, pieces: Sequence[Piece[C]]) -> RenderedMessage: ...

    # --- the shared flow -------------------------------------------------------------------
    def piece(self, chunk: C, **options: Any) -> Piece[C]:
        return Piece(chunk, self.cost(chunk), **options)

    def messages(self, pieces: Sequence[Piece[C]]) -> list[RenderedMessage]:
        packed = pack(pieces, self.limit, self.separator)
        return [self.assemble(message).showing(tuple(_shown(message))) for message in packed]

    def fit_entry(self, view: EntryView, L: Mapping[str, str]) -> EntryView:
        return fit_fields(
            view, CUTTABLE_ENTRY_FIELDS, lambda v: self.fits_body(self.entry_chunk(v, L))
        )

    def entry_piece(
        self,
        item: StoredReport,
        locale: Locale,
        heading: Piece[C],
        entry: DigestEntry | None = None,
        style: EntryStyle | None = None,
    ) -> Piece[C]:
        """An entry's chunk, cached per report object: a digest run renders the same reports
        for many channels (the cache holds the report, so its id cannot be reused)."""
        matched = matched_names(entry.matched) if entry is not None else ""
        posted = entry.posted if entry is not None else ""
        style = style or EntryStyle()
        key = (id(item.report), item.revision > 1, locale, matched, posted, style)
        cached = self._entries.get(key)
        if cached is not None and cached[0] is item.report:
            return Piece(cached[1].content, cached[1].cost, heading=heading, shows=item.seq)
        L = labels(locale)
        view = entry_view(item.report, item.revision > 1, L, matched, posted, style)
        chunk = self.entry_chunk(view, L)
        if not self.fits_body(chunk):
            chunk = self.entry_chunk(self.fit_entry(view, L), L)
        piece = self.piece(chunk, heading=heading, shows=item.seq)
        if len(self._entries) >= _ENTRY_CACHE_SIZE:
            self._entries.clear()
        self._entries[key] = (item.report, piece)
        return piece

    def locale_piece(self, macro: str, locale: Locale) -> Piece[C]:
        """A piece whose text depends on the locale alone (the legend): rendered once."""
        key = (macro, locale)
        piece = self._per_locale.get(key)
        if piece is None:
            piece = self._per_locale[key] = self.piece(self.text_chunk(macro, labels(locale)))
        return piece

    def group_heading(self, label: str, locale: Locale) -> Piece[C]:
        """A group's `[tag]` heading, cut to fit; cached like entries (tags repeat a lot)."""
        key = (label, locale)
        piece = self._headings.get(key)
        if piece is None:
            L = labels(locale)
            cut = cut_to_fit(label, lambda t: self.fits_heading(self.group_chunk(t, L)))
            chunk = self.group_chunk(ELLIPSIS if cut is None else cut, L)
            piece = self.piece(chunk, keep_with_next=True)
            if len(self._headings) >= _ENTRY_CACHE_SIZE:
                self._headings.clear()
            self._headings[key] = piece
        return piece

    def synth_chunk(self, line: SynthLine, labels: Mapping[str, str]) -> C:
        """One synthesis line, its text fields cut until it fits."""
        fitted = fit_fields(
            line,
            ("text", "note", "label"),
            lambda v: self.fits_body(self.text_chunk("synth_line", labels, s=v)),
        )
        return self.text_chunk("synth_line", labels, s=fitted)

    def more_chunk(self, n: int, key: str, labels: Mapping[str, str]) -> C:
        """The "+N more" line; platforms with buttons add one carrying (MORE, key)."""
        return self.text_chunk("more", labels, n=n, typed="")

    def fit_block(self, block: Block, L: Mapping[str, str]) -> list[Block]:
        """A block that fits as it is, split (paragraphs, code) or cut (the rest)."""

        def fits(candidate: Block) -> bool:
            return self.fits_body(self.block_chunk(candidate, L))

        if fits(block):
            return [block]
        if block.kind not in SPLITTABLE_KINDS:
            return [fit_fields(block, CUTTABLE_BLOCK_FIELDS, fits)]
        # The frame (label, note, path) is fitted with room for some text: fitted with an
        # empty text, a long note could take all the room and leave none for the text.
        room = dataclasses.replace(block, text=FRAME_TEXT_ROOM)
        frame = fit_fields(room, CUTTABLE_BLOCK_FIELDS[1:], fits)
        texts = split_to_fit(block.text, lambda t: fits(dataclasses.replace(frame, text=t)))
        first = dataclasses.replace(frame, text=texts[0])
        rest = dataclasses.replace(frame, label="", note="", tight=False)
        return [first, *(dataclasses.replace(rest, text=text) for text in texts[1:])]

    def section(
        self, item: StoredReport | Report, section: Section, locale: Locale
    ) -> list[RenderedMessage]:
        L = labels(locale)
        report, updated = as_stored(item)
        blocks = section_blocks(report, section, L)
        title = L[f"section_{section.value}"]
        return self._blocks(report, updated, title, blocks, L, section is Section.SUMMARY)

    def report_pages(self, item: StoredReport | Report, locale: Locale) -> list[RenderedMessage]:
        """The whole report (the Full report button), a new message at each section boundary:
        the summary first, then one run of messages per section the report has, each opening
        with the PR and that section's name. Every message fits the platform's limits (a
        Slack message's blocks also fit one modal page)."""
        L = labels(locale)
        report, updated = as_stored(item)
        runs: list[tuple[str, list[Block]]] = [(L["section_full"], [])]
        for block in section_blocks(report, Section.FULL, L):
            if block.kind == "heading":
                runs.append((block.label, []))
            else:
                runs[-1][1].append(block)
        messages: list[RenderedMessage] = []
        for title, blocks in runs:
            if blocks:
                messages += self._blocks(report, updated, title, blocks, L, False)
        return messages

    def titled_blocks(
        self, item: StoredReport | Report, title: str, blocks: Sequence[Block], locale: Locale
    ) -> list[RenderedMessage]:
        """Blocks of a report under a head naming the PR and `title` (a full report's tab),
        split between messages as a section is, without buttons."""
        report, updated = as_stored(item)
        return self._blocks(report, updated, title, blocks, labels(locale), False)

    def _blocks(
        self,
        report: Report,
        updated: bool,
        title: str,
        blocks: Sequence[Block],
        L: Mapping[str, str],
        actions: bool,
    ) -> list[RenderedMessage]:
        """A head (the PR and `title`), then the blocks, split between messages; a message
        that continues opens with a shorter head."""

        def fits_head(continued: bool) -> Callable[[EntryView], bool]:
            return lambda v: self.fits_heading(self.head_chunk(v, title, continued, L))

        view = entry_view(report, updated, L)
        head = fit_fields(view, CUTTABLE_ENTRY_FIELDS, fits_head(False))
        again = fit_fields(view, CUTTABLE_ENTRY_FIELDS, fits_head(True))
        continued = self.piece(self.head_chunk(again, title, True, L), keep_with_next=True)
        pieces = [self.piece(self.head_chunk(head, title, False, L))]
        for block in blocks:
            for fitted in self.fit_block(block, L):
                chunk = self.block_chunk(fitted, L)
                pieces.append(self.piece(chunk, heading=continued, tight=fitted.tight))
        buttons = self.actions_chunk(head, L) if actions else None
        if buttons is not None:
            pieces.append(self.piece(buttons, heading=continued, tight=True))
        return self.messages(pieces)

    def notice(self, text: str, locale: Locale) -> RenderedMessage:
        L = labels(locale)
        cut = cut_to_fit(text, lambda t: self.fits_body(self.text_chunk("notice", L, text=t)))
        chunk = self.text_chunk("notice", L, text=ELLIPSIS if cut is None else cut)
        return self.assemble([self.piece(chunk)])

    def macro(self, name: str) -> Callable[..., str]:
        """A macro by name from the platform's digest, section or notice template."""
        for module in (self.digest_macros, self.section_macros, self.notice_macros):
            found = getattr(module, name, None)
            if found is not None:
                return found  # type: ignore[no-any-return]
        raise LookupError(f"no template macro named {name!r}")
