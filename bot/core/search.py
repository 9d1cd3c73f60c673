"""Search the stored reports with a query (issue 16): what `prdigest search`, Slack's `/pr find`
and Telegram's `/find` answer.

Candidates come from the full-text index when the query has words every match must contain
(`text_needles`), else from every report (narrowed in SQL by a top-level `number:` or `repo:`
term); each candidate is then checked with the query language's own `matches`, so the index
only narrows and the language stays the truth.

Ranking, best first:
1. exact hits: the PR number the query names (`#7422`, `number:7422`, or the bare word 7422),
   a word that is one of the report's tags (or a `tag:` term it has: `tag:ci OR 权重`), a
   title that holds every word of the query;
2. relevance: each word found in the title counts 3, in the one-liner 2, elsewhere 1;
3. newest: merged time (else when the store first saw it), then ingest seq.

Only the best `limit` hits are kept while the candidates are read (a heap), so a query that
matches a large store costs memory for `limit` reports, not for all of them.
"""

from __future__ import annotations

import heapq
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from sqlalchemy import ColumnElement, func, select

from bot.core.query import And, Field, Or, Query, Text, matches, normalize_text, text_needles
from bot.core.query.values import as_utc, number_bounds
from bot.core.reports.model import STORED, Report
from bot.core.store.reports import ReportStore
from bot.core.store.search import text_candidates
from bot.core.store.tables import reports

CHUNK: Final = 500  # reports read per statement
EXACT_SCORE: Final = 100.0  # one exact hit outranks any relevance
TITLE_WEIGHT: Final = 3.0
SUMMARY_WEIGHT: Final = 2.0
OTHER_WEIGHT: Final = 1.0
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Hit:
    """One matching report, with its score and why it ranks where it does."""

    report: Report
    score: float
    seq: int
    exact: tuple[str, ...] = ()  # "number", "tag", "title": the exact hits, if any
    seen_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: list[Hit]  # best first, at most `limit`
    total: int  # every matching report

    @property
    def more(self) -> int:
        """How many matches lie past the limit."""
        return self.total - len(self.hits)


@dataclass(frozen=True, slots=True)
class _Ranker:
    """What a query ranks by: its positive words and the numbers it names exactly."""

    words: tuple[str, ...]
    numbers: frozenset[int]
    tags: frozenset[str]  # the `tag:` terms asked for
    all_words: tuple[str, ...] = field(default=())  # the words every match holds (AND)

    def rank(self, report: Report, seq: int, seen_at: datetime | None) -> Hit:
        exact: list[str] = []
        if report.number in self.numbers:
            exact.append("number")
        tags = {normalize_text(tag) for tag in report.tags}
        if any(word in tags for word in self.words) or not self.tags.isdisjoint(tags):
            exact.append("tag")
        title = normalize_text(report.title)
        summary = normalize_text(report.summary)
        if self.all_words and all(word in title for word in self.all_words):
            exact.append("title")
        relevance = 0.0
        others: list[str] | None = None
        for word in self.words:
            if word in title:
                relevance += TITLE_WEIGHT
            elif word in summary:
                relevance += SUMMARY_WEIGHT
            else:
                if others is None:
                    others = [normalize_text(text) for text in _other_texts(report)]
                if any(word in text for text in others):
                    relevance += OTHER_WEIGHT
        score = EXACT_SCORE * len(exact) + relevance
        return Hit(report, score, seq, tuple(exact), seen_at)


def _other_texts(report: Report) -> list[str]:
    return [
        report.recommendation,
        report.motivation,
        report.implementation,
        report.risks,
        report.impact,
        report.comment_highlights,
    ]


def _positive_terms(query: Query) -> Iterator[Text | Field]:
    """The words and fields the query asks for (none under NOT)."""
    if isinstance(query, Text | Field):
        yield query
    elif isinstance(query, And | Or):
        for item in query.items:
            yield from _positive_terms(item)


def _ranker(query: Query) -> _Ranker:
    words: list[str] = []
    numbers: set[int] = set()
    tags: set[str] = set()
    for term in _positive_terms(query):
        if isinstance(term, Text):
            words.append(term.value)
            if term.value.isdigit() and len(term.value) <= 10:
                numbers.add(int(term.value))
        elif term.name == "number" and term.op == ":" and ".." not in term.value:
            numbers.add(int(term.value))
        elif term.name == "tag":
            tags.add(term.value)
    return _Ranker(
        tuple(dict.fromkeys(words)),
        frozenset(numbers),
        frozenset(tags),
        tuple(text_needles(query)),
    )


def _narrowing(query: Query) -> list[ColumnElement[bool]]:
    """SQL conditions every match meets, from the top-level `number:` and `repo:` terms (a
    superset: `matches` decides)."""
    conditions: list[ColumnElement[bool]] = []
    for term in query.items if isinstance(query, And) else (query,):
        if not isinstance(term, Field):
            continue
        if term.name == "number":
            low, high = number_bounds(term.op, term.value)
            if low is not None:
                conditions.append(reports.c.number >= low)
            if high is not None:
                conditions.append(reports.c.number <= high)
        elif term.name == "repo" and "/" in term.value:
            conditions.append(func.lower(reports.c.repo) == term.value)
    return conditions


def _sort_key(hit: Hit) -> tuple[float, float, int]:
    moment = hit.report.merged_at or hit.seen_at
    when = (as_utc(moment) - _EPOCH).total_seconds() if moment is not None else float("-inf")
    return (hit.score, when, hit.seq)


async def search(store: ReportStore, query: Query, *, limit: int, now: datetime) -> SearchResult:
    """The reports matching `query`, best `limit` first, and how many match in all."""
    ranker = _ranker(query)
    conditions = _narrowing(query)
    needles = text_needles(query)
    ids = await text_candidates(store.engine, needles) if needles else None
    best: list[tuple[tuple[float, float, int], int, Hit]] = []
    total = 0
    async for row in _rows(store, ids, conditions):
        report = Report.model_validate(row.data, context=STORED)
        if not matches(query, report, seen_at=row.ingested_at, now=now):
            continue
        total += 1
        hit = ranker.rank(report, int(row.seq), row.ingested_at)
        entry = (_sort_key(hit), total, hit)
        if len(best) < limit:
            heapq.heappush(best, entry)
        elif limit > 0 and entry[0] > best[0][0]:
            heapq.heapreplace(best, entry)
    ranked = [hit for _, _, hit in sorted(best, key=lambda e: e[0], reverse=True)]
    return SearchResult(ranked, total)


async def _rows(
    store: ReportStore, ids: list[int] | None, conditions: list[ColumnElement[bool]]
) -> AsyncIterator[Any]:
    """The candidate rows (id, data, seq, ingested_at), CHUNK at a time: the given ids, or
    every report when `ids` is None."""
    columns = select(reports.c.id, reports.c.data, reports.c.seq, reports.c.ingested_at)
    if conditions:
        columns = columns.where(*conditions)
    async with store.engine.connect() as conn:
        if ids is not None:
            for start in range(0, len(ids), CHUNK):
                chunk = ids[start : start + CHUNK]
                for row in await conn.execute(columns.where(reports.c.id.in_(chunk))):
                    yield row
            return
        last = 0
        while True:
            statement = columns.where(reports.c.id > last).order_by(reports.c.id).limit(CHUNK)
            rows = (await conn.execute(statement)).all()
            for row in rows:
                yield row
            if len(rows) < CHUNK:
                return
            last = int(rows[-1].id)
