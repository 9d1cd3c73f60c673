"""The brute-force evaluator: whether one report matches a query, and which terms matched.

It is the reference the store's index is checked against (and ranks or verifies candidates
with), so it is plain: every term read straight off the Report.

- Text (bare words, phrases, `roll*`): found in one text field (or one related-PR line or
  key-file note: reading.list_texts) as text.contains finds it,
  both sides normalized (text.normalize_text): whole words in Latin script (`ci` is not in
  "specific"), by substring in Chinese, Japanese and Korean, so 权重 or 显存 is found inside
  any Chinese sentence.
- `since:`/`before:`: the report's merged_at, else `seen_at` (when the store first saw it);
  neither known: no match. `since` is inclusive, `before` exclusive.
- `file:`: a key file's path by glob (tags.py's linear matcher), case-insensitive, with
  CODEOWNERS' and gitignore's rules (reading.glob_text): without `/` it matches any part of
  the path, directories included; with one it is anchored at the repo root.
- `symbol:`: a key symbol (or a key file's symbol) equal to the value, or one of its dotted
  parts (`symbol:SGLangHttpServer` finds `SGLangHttpServer.__init__`), case-insensitive.

Each field's test is in FIELD_TESTS, keyed by the table of fields (fields.py) and checked
against it on import; a query holding a name that is no field raises FieldTableError.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import cached_property
from typing import Final

from bot.core.query.ast import And, Field, Not, Query, Text, fields_of, unparse
from bot.core.query.fields import check_covers, for_field
from bot.core.query.reading import (
    compiled_glob,
    file_paths,
    list_texts,
    risk_texts,
    symbol_names,
    symbol_parts,
    tag_text,
)
from bot.core.query.text import TEXT_FIELDS, contains, normalize_text
from bot.core.query.values import (
    IMPACT_ORDER,
    REC_ORDER,
    as_utc,
    level_accepts,
    number_bounds,
    time_bound,
)
from bot.core.reports.model import Report
from bot.core.reports.tags import glob_matches


class Prepared:
    """A report ready for many queries: its searched text is normalized once, when first
    needed, and kept (a digest tick asks every destination's query of the same reports)."""

    def __init__(self, report: Report, seen_at: datetime | None = None) -> None:
        self.report = report
        self.seen_at = seen_at

    @cached_property
    def texts(self) -> dict[str, str]:
        texts = {name: normalize_text(getattr(self.report, name)) for name in TEXT_FIELDS}
        return texts | list_texts(self.report)

    @cached_property
    def time(self) -> datetime | None:
        moment = self.report.merged_at or self.seen_at
        return None if moment is None else as_utc(moment)


class _View:
    """One report as the terms read it, at `now`."""

    def __init__(self, prepared: Prepared, now: datetime) -> None:
        self.prepared = prepared
        self.report = prepared.report
        self.now = now

    @property
    def texts(self) -> dict[str, str]:
        return self.prepared.texts

    @property
    def time(self) -> datetime | None:
        return self.prepared.time

    def text_fields(self, term: Text) -> list[str]:
        return [
            name for name, text in self.texts.items() if contains(text, term.value, term.prefix)
        ]


def matches(
    query: Query, report: Report | Prepared, *, seen_at: datetime | None = None, now: datetime
) -> bool:
    """Whether `report` satisfies `query`; time terms count back from `now`. A `Prepared`
    report (its own `seen_at`) keeps its normalized text for the next query."""
    _known_fields(query)
    return _holds(query, _View(_prepared(report, seen_at), now))


def _prepared(report: Report | Prepared, seen_at: datetime | None) -> Prepared:
    return report if isinstance(report, Prepared) else Prepared(report, seen_at)


def explain(
    query: Query, report: Report, *, seen_at: datetime | None = None, now: datetime
) -> list[str]:
    """The terms that hold for `report`, as query text (`tag:rollout`, `权重 in summary,
    risks`, `-tag:ci` for a NOT that holds), in query order."""
    _known_fields(query)
    found: list[str] = []
    _explain(query, _View(Prepared(report, seen_at), now), found)
    return found


def text_needles(query: Query) -> list[str]:
    """Normalized strings every matching report contains in some text field: the bare words
    and phrases ANDed at the top level (none under OR or NOT). An index narrows with them."""
    items = query.items if isinstance(query, And) else (query,)
    return list(dict.fromkeys(item.value for item in items if isinstance(item, Text)))


def _known_fields(query: Query) -> None:
    """FieldTableError for a Field anywhere in `query` whose name is no field (an AST made in
    code: the parser refuses one), before any term is read: the error must not depend on
    whether an earlier term already decided the answer for this report."""
    for term in fields_of(query):
        for_field(FIELD_TESTS, term.name)


def _holds(query: Query, view: _View) -> bool:
    if isinstance(query, Text):
        return any(contains(text, query.value, query.prefix) for text in view.texts.values())
    if isinstance(query, Field):
        return FIELD_TESTS[query.name](query, view)
    if isinstance(query, Not):
        return not _holds(query.item, view)
    if isinstance(query, And):
        return all(_holds(item, view) for item in query.items)
    return any(_holds(item, view) for item in query.items)


def _explain(query: Query, view: _View, found: list[str]) -> None:
    if isinstance(query, Text):
        fields = view.text_fields(query)
        if fields:
            found.append(f"{unparse(query)} in {', '.join(fields)}")
    elif isinstance(query, Field):
        if FIELD_TESTS[query.name](query, view):
            found.append(unparse(query))
    elif isinstance(query, Not):
        if not _holds(query.item, view):
            found.append(unparse(query))
    else:
        for item in query.items:
            _explain(item, view, found)


def _tag(term: Field, view: _View) -> bool:
    return any(tag_text(tag) == term.value for tag in view.report.tags)


def _repo(term: Field, view: _View) -> bool:
    repo = view.report.repo.lower()
    return repo == term.value if "/" in term.value else repo.rsplit("/", 1)[-1] == term.value


def _risk(term: Field, view: _View) -> bool:
    flags = risk_texts(view.report)
    if term.value == "*":
        return bool(flags)
    return any(term.value in flag for flag in flags)


def _impact(term: Field, view: _View) -> bool:
    return level_accepts(IMPACT_ORDER, term.op, term.value, view.report.impact_level)


def _rec(term: Field, view: _View) -> bool:
    return level_accepts(REC_ORDER, term.op, term.value, view.report.recommendation_level)


def _number(term: Field, view: _View) -> bool:
    low, high = number_bounds(term.op, term.value)
    number = view.report.number
    return (low is None or number >= low) and (high is None or number <= high)


def _file(term: Field, view: _View) -> bool:
    glob = compiled_glob(term.value)  # over the whole path: reading.glob_text
    return any(glob_matches(glob, path.split("/")) for path in file_paths(view.report))


def _symbol(term: Field, view: _View) -> bool:
    wanted = term.value.casefold()
    return any(
        folded == wanted or wanted in symbol_parts(folded) for folded in symbol_names(view.report)
    )


def _since(term: Field, view: _View) -> bool:
    return view.time is not None and view.time >= time_bound(term.value, view.now)


def _before(term: Field, view: _View) -> bool:
    return view.time is not None and view.time < time_bound(term.value, view.now)


# What each field of the table (fields.py) asks of a report: every field, and nothing else.
FIELD_TESTS: Final[dict[str, Callable[[Field, _View], bool]]] = {
    "tag": _tag,
    "repo": _repo,
    "risk": _risk,
    "impact": _impact,
    "rec": _rec,
    "number": _number,
    "file": _file,
    "symbol": _symbol,
    "since": _since,
    "before": _before,
}
check_covers("the query evaluator (evaluate.FIELD_TESTS)", FIELD_TESTS)
