"""A full report as tabs, one per section, for a pager that shows one section at a time.

The tabs together hold everything `/pr REF full` shows: the summary, motivation,
implementation, files (with the key code under its own heading), comments, risks and related
PRs. A tab that does not fit one message is split into pages by the platform's renderer, each
page within the platform's limits and opening with the PR and the tab's section name. Which
tabs a report has, their labels and their pages are the same for every platform; only the
keyboard that flips through them is the adapter's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from bot.core.digest.select import StoredReport
from bot.core.models import Format, Locale, Section
from bot.core.render.actions import section_data
from bot.core.render.flow import RenderedMessage
from bot.core.render.labels import labels
from bot.core.render.renderer import Renderer
from bot.core.render.sections import Block, files_blocks, section_blocks, snippet_blocks
from bot.core.render.views import as_stored
from bot.core.reports.model import Report

# The tabs in the order `/pr REF full` shows their sections.
REPORT_TABS: Final = (
    Section.SUMMARY,
    Section.MOTIVATION,
    Section.IMPL,
    Section.FILES,
    Section.COMMENTS,
    Section.RISKS,
    Section.RELATED,
)


def tab_blocks(report: Report, tab: Section, L: Mapping[str, str]) -> list[Block]:
    """The blocks one tab shows: its section's, and under Files the key code as well (no
    other tab has it); a tab the report lacks says so."""
    if tab is not Section.FILES:
        return section_blocks(report, tab, L)
    blocks = files_blocks(report, L)
    code = snippet_blocks(report)
    if code:
        blocks += [Block("heading", label=L["section_snippets"]), *code]
    return blocks or section_blocks(report, tab, L)


def report_tabs(item: StoredReport | Report) -> list[Section]:
    """The tabs `item` has something in (the summary always: it opens the pager)."""
    report, _ = as_stored(item)
    L = labels(Locale.EN)  # which tabs hold something does not depend on the words
    return [
        tab
        for tab in REPORT_TABS
        if tab is Section.SUMMARY or tab_blocks(report, tab, L)[0].kind != "empty"
    ]


def tab_label(tab: Section, locale: Locale) -> str:
    """A tab's short name on its button (摘要, Summary)."""
    return labels(locale)[f"tab_{tab.value}"]


def tab_pages(
    renderer: Renderer, item: StoredReport | Report, tab: Section, fmt: Format, locale: Locale
) -> list[RenderedMessage]:
    """One tab as messages that each fit the platform (at least one), rendered the way
    `/pr REF SECTION` renders a section, without its buttons."""
    L = labels(locale)
    report, _ = as_stored(item)
    blocks = tab_blocks(report, tab, L)
    return renderer.titled_blocks(item, L[f"section_{tab.value}"], blocks, fmt, locale)


CURRENT_MARK: Final = "▸ "  # before the label of the section shown
PREVIOUS: Final = "‹"
NEXT: Final = "›"
Button = tuple[str, str]  # (label, the press's data: `sec:REF:SECTION:PAGE`)


@dataclass(frozen=True, slots=True)
class Shown:
    """What a pager shows: a section, its page (from 0) and how many it has."""

    tab: Section
    page: int
    pages: int


def pager_rows(
    ref: str, tabs: Sequence[Section], shown: Shown, locale: Locale, per_row: int
) -> list[list[Button]]:
    """A pager's buttons: the sections (the one shown marked), `per_row` to a row, then
    ‹ page/pages › when the section has more than one page (wrapping around)."""
    buttons = [
        (
            (CURRENT_MARK if tab is shown.tab else "") + tab_label(tab, locale),
            section_data(ref, tab.value, 0),
        )
        for tab in tabs
    ]
    rows = [buttons[start : start + per_row] for start in range(0, len(buttons), per_row)]
    if shown.pages > 1:

        def to_page(page: int, text: str) -> Button:
            return text, section_data(ref, shown.tab.value, page % shown.pages)

        here = f"{shown.page + 1}/{shown.pages}"
        rows.append(
            [
                to_page(shown.page - 1, PREVIOUS),
                to_page(shown.page, here),
                to_page(shown.page + 1, NEXT),
            ]
        )
    return rows
