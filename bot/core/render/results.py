"""Search results as words: one line per PR, and the notice that holds them.

`verl-project/verl#7422 ★ Fix weight sync — 调整权重同步的顺序 (impact: high)`: the ref, ★ when
the report says must-read, the title, the one-liner (cut to ONE_LINER_MAX) and the impact
level in the reader's language. The chats send the lines as a notice (`find_results`, or
`find_results_more` with "+N more" and the query echoed so it can be narrowed); the CLI prints
the same notice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from bot.core.models import Locale
from bot.core.render.labels import labels, notice_text
from bot.core.reports.model import RecommendationLevel, Report

ONE_LINER_MAX: Final = 100  # code points of the one-liner a result line shows
TITLE_MAX: Final = 120
ELLIPSIS: Final = "…"


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
        line += L["result_impact"].format(label=L["impact"], level=level)
    return line


def narrower(query: str) -> str:
    """The query with one more term, as an example of narrowing it."""
    extra = "since:30d" if "impact" in query.lower() else "impact>=medium"
    return f"{query} {extra}"


def result_notice(
    reports: Sequence[Report],
    total: int,
    query: str,
    locale: Locale,
    *,
    command: str,
    capped: bool = False,
    tags: Sequence[str] = (),
) -> tuple[str, dict[str, str]]:
    """The notice key and parameters that answer a search: none found, all shown, or the
    first ones with how many more (`990+` when the count stopped at `total`, `capped`) and
    `command` (`/find QUERY …`, written as the asker writes it) as the example of a narrower
    query. `tags`: the query's bare words that are also tags (said, with how to ask for them)."""
    hint = ""
    if tags:
        spelled = {"words": ", ".join(tags), "tags": " ".join(f"tag:{tag}" for tag in tags)}
        hint = notice_text("also_tags", locale, spelled)
    if not reports:
        return "find_empty", {"query": query, "hint": hint}
    params = {
        "hint": hint,
        "example": command,
        "query": query,
        "items": "\n".join(result_line(report, locale) for report in reports),
        "total": f"{total}+" if capped else str(total),
        "more": f"{total - len(reports)}+" if capped else str(total - len(reports)),
    }
    return ("find_results" if total <= len(reports) else "find_results_more"), params
