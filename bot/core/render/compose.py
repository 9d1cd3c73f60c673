"""A digest as pieces, for every layout: the flat digest, or a threaded/topics summary and
one part per tag group. The platform renderer (flow.PlatformRenderer) renders each chunk with
its own templates; this module only decides what goes where, in which order.

flat:     header · synthesis · still unread · tag groups · "+N more" · legend
summary:  header · group counts · synthesis · still unread · "+N more" · legend
group:    its `[tag]` heading (no digest header) · its entries
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from bot.core.digest.select import Digest, DigestEntry, TagGroup
from bot.core.digest.synthesis import PRMention, Synthesis
from bot.core.models import Layout, Locale, Verbosity
from bot.core.render.flow import PlatformRenderer, RenderedMessage, fit_fields
from bot.core.render.labels import labels
from bot.core.render.options import ALL_PART, SUMMARY_PART, DigestOptions
from bot.core.render.split import ELLIPSIS, Piece, cut_to_fit
from bot.core.render.views import (
    EntryStyle,
    SynthLine,
    display_ref,
    github_pr_url,
    group_label,
    header_view,
)

SYNTH_REFS_MAX = 10  # PRs named on one hot-file or storyline line


@dataclass(frozen=True, slots=True)
class ComposedPart:
    key: str
    label: str
    messages: list[RenderedMessage]


def _refs(prs: Sequence[PRMention], show_repo: bool) -> tuple[tuple[str, str | None], ...]:
    return tuple(
        (display_ref(pr.repo, pr.number, show_repo), github_pr_url(pr.repo, pr.number))
        for pr in prs[:SYNTH_REFS_MAX]
    )


def synthesis_lines(s: Synthesis, show_repo: bool, L: Mapping[str, str]) -> list[SynthLine]:
    lines = [SynthLine("heading", label=L["synthesis"])]
    if s.by_tag:
        text = " · ".join(f"{tag} {n}" for tag, n in s.by_tag)
        lines.append(SynthLine("counts", text=text, label=L["syn_by_tag"]))
    impacts = " · ".join(f"{L[f'impact_{key}']} {n}" for key, n in s.by_impact)
    lines.append(SynthLine("counts", text=impacts, label=L["syn_by_impact"]))
    if s.breaking:
        lines.append(SynthLine("heading", label=L["syn_breaking"]))
        lines += [SynthLine("pr", pr.title, refs=_refs([pr], show_repo)) for pr in s.breaking]
    if s.hot_files:
        lines.append(SynthLine("heading", label=L["syn_hot_files"]))
        lines += [SynthLine("file", f.path, refs=_refs(f.prs, show_repo)) for f in s.hot_files]
    if s.storylines:
        lines.append(SynthLine("heading", label=L["syn_storylines"]))
        for story in s.storylines:
            kind = L[f"syn_{story.kind}"]
            refs = _refs(story.prs, show_repo)
            lines.append(SynthLine("story", label=kind, refs=refs, note=story.note))
    if s.changed:
        lines.append(SynthLine("heading", label=L["syn_changed"]))
        lines += [SynthLine("pr", pr.title, refs=_refs([pr], show_repo)) for pr in s.changed]
    return lines


class DigestComposer:
    """Composes one digest for one platform and locale."""

    def __init__(
        self,
        platform: PlatformRenderer[Any],
        digest: Digest,
        locale: Locale,
        when: date | None,
        options: DigestOptions,
    ) -> None:
        self.p = platform
        self.digest = digest
        self.locale = locale
        self.when = when
        self.options = options
        self.L = labels(locale)
        self._styles: dict[tuple[str, Verbosity], EntryStyle] = {}

    # --- the parts -------------------------------------------------------------------------
    def flat(self) -> list[Piece[Any]]:
        pieces = self.header()
        if self.digest.is_empty and not self.digest.unread:
            return [*pieces, self.p.piece(self.p.text_chunk("empty_digest", self.L))]
        pieces += self.synthesis() + self.unread()
        for group in self.digest.groups:
            pieces += self.group(group)
        return pieces + self.footer()

    def summary(self) -> list[Piece[Any]]:
        pieces = self.header()
        if self.digest.is_empty and not self.digest.unread:
            return [*pieces, self.p.piece(self.p.text_chunk("empty_digest", self.L))]
        if self.digest.groups:
            counts = [(group_label(g.tag, self.L), len(g.entries)) for g in self.digest.groups]
            chunk = self.p.text_chunk("group_counts", self.L, counts=self.fit_counts(counts))
            pieces.append(self.p.piece(chunk))
        return pieces + self.synthesis() + self.unread() + self.footer()

    def group(self, group: TagGroup) -> list[Piece[Any]]:
        heading = self.p.group_heading(group_label(group.tag, self.L), self.locale)
        return [heading, *(self.entry(entry, heading) for entry in group.entries)]

    # --- the pieces ------------------------------------------------------------------------
    def header(self) -> list[Piece[Any]]:
        view = header_view(self.digest, self.locale, self.when)
        chunk = self.p.header_chunk(view, self.L)
        if not self.p.fits_heading(chunk):  # (rendered once when it fits, as it mostly does)
            fitted = fit_fields(
                view,
                ("title", "top_flags"),
                lambda v: self.p.fits_heading(self.p.header_chunk(v, self.L)),
            )
            chunk = self.p.header_chunk(fitted, self.L)
        return [self.p.piece(chunk)]

    def entry(
        self, entry: DigestEntry, heading: Piece[Any], verbosity: Verbosity | None = None
    ) -> Piece[Any]:
        style = self._style(entry.tag, verbosity or self.options.verbosity)
        piece = self.p.entry_piece(entry.item, self.locale, heading, entry, style)
        # one line per PR: oneline entries follow each other without a blank line
        oneline = style.verbosity is Verbosity.ONELINE
        return dataclasses.replace(piece, tight=True) if oneline else piece

    def _style(self, tag: str, verbosity: Verbosity) -> EntryStyle:
        """The style of the digest's entries under `tag` (one object per tag and verbosity:
        a digest has a few hundred entries over a handful of tags)."""
        key = (tag, verbosity)
        style = self._styles.get(key)
        if style is None:
            style = self._styles[key] = EntryStyle(self.digest.show_repo, tag, verbosity, True)
        return style

    def unread(self) -> list[Piece[Any]]:
        pieces: list[Piece[Any]] = []
        if self.digest.unread:
            label = self.L["unread"].format(n=len(self.digest.unread))
            heading = self.p.group_heading(label, self.locale)
            # compact: one line each with its buttons; the full entry was shown before
            compact = (self.entry(e, heading, Verbosity.ONELINE) for e in self.digest.unread)
            pieces += [heading, *compact]
        if self.digest.unread_dropped > 0:
            chunk = self.p.text_chunk("unread_dropped", self.L, n=self.digest.unread_dropped)
            pieces.append(self.p.piece(chunk))
        return pieces

    def synthesis(self) -> list[Piece[Any]]:
        s = self.digest.synthesis
        if not self.options.synthesis or s is None or s.is_empty:
            return []
        pieces: list[Piece[Any]] = []
        heading: Piece[Any] | None = None
        for line in synthesis_lines(s, self.digest.show_repo, self.L):
            chunk = self.p.synth_chunk(line, self.L)
            if line.kind == "heading":
                heading = self.p.piece(chunk, keep_with_next=True)
                pieces.append(heading)
            else:
                pieces.append(self.p.piece(chunk, heading=heading, tight=True))
        return pieces

    def footer(self) -> list[Piece[Any]]:
        pieces: list[Piece[Any]] = []
        if self.digest.more:
            chunk = self.p.more_chunk(self.digest.more, self.options.more_key, self.L)
            pieces.append(self.p.piece(chunk))
        if self.digest.groups or self.digest.unread:
            pieces.append(self.p.locale_piece("legend", self.locale))
        return pieces

    def fit_counts(self, counts: list[tuple[str, int]]) -> str:
        text = " · ".join(f"[{label}] {n}" for label, n in counts)
        cut = cut_to_fit(
            text, lambda t: self.p.fits_heading(self.p.text_chunk("group_counts", self.L, counts=t))
        )
        return ELLIPSIS if cut is None else cut

    # --- the layouts -----------------------------------------------------------------------
    def parts(self) -> list[ComposedPart]:
        if self.options.layout is Layout.FLAT:
            return [ComposedPart(ALL_PART, self.digest.title, self.p.messages(self.flat()))]
        parts = [ComposedPart(SUMMARY_PART, self.digest.title, self.p.messages(self.summary()))]
        for group in self.digest.groups:
            label = group_label(group.tag, self.L)
            parts.append(ComposedPart(group.tag, label, self.p.messages(self.group(group))))
        return parts
