"""Search results: one line per PR, the notice that holds them, and narrower queries to try.

`verl-project/verl#7422 ★ Fix weight sync — 调整权重同步的顺序 🟡 (impact: high)`: the ref, ★
when the report says must-read, the title, the one-liner (cut to ONE_LINER_MAX), the impact
mark and level in the reader's language. The chats send the lines as a notice
(`find_results`, or `find_results_more` with "+N more" and a narrower query to try,
`find_results_more_bare` when no term the chat tried narrows it); the CLI prints the same
notice. In Slack and Telegram each line links the PR as a digest entry does and carries the
digest's Full report and Read buttons (`results_message`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Final, TypeVar

from bot.core.models import Format, Locale
from bot.core.query.ast import And, Field, Not, Or, Query, is_bare_number
from bot.core.query.errors import QueryError
from bot.core.query.parser import parse
from bot.core.render.flow import PlatformRenderer, RenderedMessage
from bot.core.render.labels import labels, notice_text
from bot.core.render.renderer import Renderer
from bot.core.render.slack import SlackRenderer
from bot.core.render.split import pack
from bot.core.render.telegram import TelegramRenderer
from bot.core.render.views import EntryStyle, EntryView, entry_view
from bot.core.reports.model import RecommendationLevel, Report

C = TypeVar("C")

ONE_LINER_MAX: Final = 100  # code points of the one-liner a result line shows
TITLE_MAX: Final = 120
ELLIPSIS: Final = "…"
# Shorter (title, one-liner) cuts tried in turn while the linked results do not fit one message.
LINKED_CUTS: Final = ((TITLE_MAX, ONE_LINER_MAX), (60, 40), (24, 0))
# Where a notice's `items` stand: the words before and after it frame the linked results.
ITEMS_MARK: Final = "\ue002"
# Terms that often narrow a search, in the order they are tried, each with the field it names
# (a query that names that field already is not offered it).
NARROWING_TERMS: Final = (
    ("impact", "impact>=medium"),
    ("since", "since:30d"),
    ("impact", "impact:high"),
    ("since", "since:7d"),
    ("rec", "rec:must_read"),
)


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + ELLIPSIS


def result_line(report: Report, locale: Locale) -> str:
    """One PR as a search result line, in `locale`'s labels (report text as written)."""
    L = labels(Locale(locale))
    star = (
        f"{L['must_read']} " if report.recommendation_level is RecommendationLevel.MUST_READ else ""
    )
    line = f"{report.ref} {star}{_cut(report.title, TITLE_MAX)}"
    if report.summary.strip():
        line += f" — {_cut(report.summary, ONE_LINER_MAX)}"
    if report.impact_level is not None:
        level = L[f"impact_{report.impact_level.value}"]
        mark = L[f"impact_mark_{report.impact_level.value}"]
        line += f" {mark}" + L["result_impact"].format(label=L["impact"], level=level)
    return line


def narrower(query: str) -> str:
    """The query with one more term, as an example of narrowing it (not checked: the CLI's)."""
    extra = "since:30d" if "impact" in query.lower() else "impact>=medium"
    return f"{query} {extra}"


def _field_names(query: Query) -> set[str]:
    if isinstance(query, Field):
        return {query.name}
    if isinstance(query, Not):
        return _field_names(query.item)
    if isinstance(query, And | Or):
        return {name for item in query.items for name in _field_names(item)}
    return set()


def narrowings(query: Query, text: str) -> list[tuple[str, Query]]:
    """The query with one more NARROWING_TERMS term, as written and as parsed, for each term
    whose field the query does not name yet. A query that is an OR at the top is written in
    parentheses, so the term narrows all of it (AND binds tighter than OR). Whether one
    really narrows is for the store to say: these are only the candidates."""
    named = _field_names(query)
    grouped = isinstance(query, Or) and not is_bare_number(query)
    written = f"({text})" if grouped else text
    found: list[tuple[str, Query]] = []
    for field, term in NARROWING_TERMS:
        if field in named:
            continue
        candidate = f"{written} {term}"
        try:
            found.append((candidate, parse(candidate)))
        except QueryError:  # one term past the query's limits
            continue
    return found


def result_notice(
    reports: Sequence[Report],
    total: int,
    query: str,
    locale: Locale,
    *,
    command: str | None,
    capped: bool = False,
    tags: Sequence[str] = (),
) -> tuple[str, dict[str, str]]:
    """The notice key and parameters that answer a search: none found, all shown, or the
    first ones with how many more (`990+` when the count stopped at `total`, `capped`) and
    `command` (`/find QUERY …`, written as the asker writes it) as the example of a narrower
    query; without one (None: no term tried narrows it), just how many more. `tags`: the
    query's bare words that are also tags (said, with how to ask for them)."""
    hint = ""
    if tags:
        spelled = {"words": ", ".join(tags), "tags": " ".join(f"tag:{tag}" for tag in tags)}
        hint = notice_text("also_tags", locale, spelled)
    if not reports:
        return "find_empty", {"query": query, "hint": hint}
    params = {
        "hint": hint,
        "query": query,
        "items": "\n".join(result_line(report, locale) for report in reports),
        "total": f"{total}+" if capped else str(total),
        "more": f"{total - len(reports)}+" if capped else str(total - len(reports)),
    }
    if total <= len(reports):
        return "find_results", params
    if command is None:
        return "find_results_more_bare", params
    return "find_results_more", {**params, "example": command}


def result_view(
    report: Report, L: Mapping[str, str], show_repo: bool, cut: tuple[int, int]
) -> EntryView:
    """A result as a digest entry's view (its links, marks and button refs), its title and
    one-liner cut to `cut` (a one-liner cut to 0 is left out)."""
    view = entry_view(report, False, L, style=EntryStyle(show_repo=show_repo))
    title_max, summary_max = cut
    summary = _cut(view.summary, summary_max) if summary_max and view.summary.strip() else ""
    return dataclasses.replace(view, title=_cut(view.title, title_max), summary=summary)


def _one_message(
    platform: PlatformRenderer[C],
    result_chunk: Callable[[EntryView, Mapping[str, str]], C],
    frame: tuple[str, str],
    views: Sequence[EntryView],
    L: Mapping[str, str],
) -> RenderedMessage | None:
    """The notice's words before the results, a chunk per result, the words after; None when
    they do not fit one message of the platform."""
    head, tail = frame
    chunks = [platform.text_chunk("notice", L, text=head)]
    chunks += [result_chunk(view, L) for view in views]
    if tail:
        chunks.append(platform.text_chunk("notice", L, text=tail))
    if not all(platform.fits_body(chunk) for chunk in chunks):
        return None
    pieces = [platform.piece(chunk, tight=index > 0) for index, chunk in enumerate(chunks)]
    if len(pack(pieces, platform.limit, platform.separator)) != 1:
        return None
    return platform.assemble(pieces)


def results_message(
    renderer: Renderer,
    notice: tuple[str, Mapping[str, str]],
    reports: Sequence[Report],
    fmt: Format,
    locale: Locale,
) -> RenderedMessage | None:
    """A search's answer in Slack or Telegram: the notice (key, params) with its `items`
    shown as one linked line per report, each with the digest's Full report and Read
    buttons, in one message; titles and one-liners cut shorter while that does not fit.
    None for plain text, or when even the shortest does not fit (the plain notice, cut, is
    the answer then)."""
    platform = renderer._platform(fmt)  # the renderer's own: its environment is built once
    if not isinstance(platform, SlackRenderer | TelegramRenderer):
        return None
    key, params = notice
    text = notice_text(key, Locale(locale), {**params, "items": ITEMS_MARK})
    head, _, tail = text.partition(ITEMS_MARK)
    frame = (head.rstrip("\n"), tail.lstrip("\n"))
    L = labels(Locale(locale))
    show_repo = len({report.repo for report in reports}) > 1
    for cut in LINKED_CUTS:
        views = [result_view(report, L, show_repo, cut) for report in reports]
        if isinstance(platform, SlackRenderer):
            message = _one_message(platform, platform.result_chunk, frame, views, L)
        else:
            message = _one_message(platform, platform.result_chunk, frame, views, L)
        if message is not None:
            return message
    return None
