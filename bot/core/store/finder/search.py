"""Search the stored reports with a query: what `prdigest search`, Slack's `/pr find`
and Telegram's `/find` answer.

The query is compiled to SQL over the store's facets and full-text index (store/search).
When SQL asks exactly what the query asks (always, but for a word or value holding NUL), a
search reads the newest WINDOW (1,000) matches, walking back from the newest report in ranges
of seqs sized by how dense the matches are; each range is read once, the database counting its
matches and ordering them by the rank below, so only the best `limit` reports of the window
(and any PR the query names, however old) are read. Past the window the
answer says "1000+". Otherwise SQL narrows to a superset and each candidate is checked with the
query language's own `matches`, which stays the truth either way (a query of words and phrases
alone is checked on the text of its facets row, as `matches` reads it: checked.py).

Ranking (search_rank.py), best first:
1. exact hits: the PR number the query names (`#7422`, `number:7422`, or the bare word 7422),
   a word that is one of the report's tags (or a `tag:` term it has: `tag:ci OR 权重`), a
   title that holds every word of the query;
2. relevance: BM25F (store/search/relevance.py): each word counted in the title and the
   one-liner (weighing most), the recommendation, and the rest of the text, each count
   discounted by its field's length and saturated;
3. newest: merged time (else when the store first saw it), then ingest seq.

On the checked path only the best `limit` hits are kept while the candidates are read (a
heap), so a query that matches a large store costs memory for `limit` reports, not for all;
the candidates are checked in a worker thread, never on the event loop.

A search has a time budget (`seconds`, the config's `search.timeout_seconds`): past it,
QueryTooSlow (store/search/budget.py), which the chats answer "took too long, narrow it".
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Integer,
    Select,
    and_,
    bindparam,
    case,
    func,
    literal,
    select,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.core.query import Query, matches
from bot.core.reports.model import STORED, Report
from bot.core.store.finder.built import Statements, counts_back
from bot.core.store.finder.checked import best_on_texts, on_texts
from bot.core.store.finder.rank import Hit, Ranker, make_ranker, sort_key
from bot.core.store.reports import ReportStore
from bot.core.store.search import Compiled, RankTerms, compile_query, frequency, score
from bot.core.store.search.budget import DEFAULT_SECONDS, Deadline, budgeted
from bot.core.store.search.text_lookup import Seqs, searched
from bot.core.store.sql.tables import report_facets as facets
from bot.core.store.sql.tables import reports

__all__ = ["Hit", "SearchResult", "search"]

CHUNK: Final = 500  # reports read per statement on the checked path
# A search reads the newest WINDOW matches (by when they were stored), counts them and ranks
# them: past that it says "1000+", and a query that matches most of a large store costs no more
# than one that matches a thousand reports. A PR number the query names is found at any age.
WINDOW: Final = 1000
FIRST_CHUNK: Final = 1024  # seqs in the first range of the walk back
RANGES: Final = 4  # ranges walked before the rest is asked for at once
MARGIN: Final = 1.2  # the next range: the seqs the window still needs at the density so far, × this
SPARSE: Final = 64  # fewer than one match in this many rows of a range: ask for the rest at once
PER_ROW_ROWS: Final = 8192  # PostgreSQL checks words row by row in ranges up to this size
RANKED: Final = Statements()  # the walks' ranked statements, built once per query (built.py)


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: list[Hit]  # best first, at most `limit`
    total: int  # every matching report, or WINDOW when `capped`
    capped: bool = False  # more than WINDOW match: `total` is a floor

    @property
    def more(self) -> int:
        """How many matches lie past the limit."""
        return self.total - len(self.hits)


async def search(
    store: ReportStore,
    query: Query,
    *,
    limit: int,
    now: datetime,
    seconds: float = DEFAULT_SECONDS,
) -> SearchResult:
    """The reports matching `query`, best `limit` first, and how many match (up to WINDOW);
    QueryTooSlow past `seconds`, QueryTooComplex when the database refuses the statement."""
    ranker = make_ranker(query)
    async with store.engine.connect() as conn, budgeted(conn, seconds) as deadline:
        compiled = compile_query(query, dialect=conn.dialect.name, now=now)
        if not compiled.exact and on_texts(query):  # checked on the facets' texts
            ids, total = await best_on_texts(conn, query, compiled.where, ranker, limit, deadline)
            rows = await _rows(conn, ids)
            hits = [ranker.rank(_report(row), int(row.seq), row.ingested_at) for row in rows]
            return SearchResult(sorted(hits, key=sort_key, reverse=True), total)
        if not compiled.exact:
            return await _checked(conn, query, compiled, ranker, limit, now, deadline)
        window = await _window(conn, query, now, ranker.terms, max(limit, 0), deadline)
        if window is None:
            return SearchResult([], 0)
        rows = await _rows(conn, [best[-1] for best in window.best])
        hits = [ranker.rank(_report(row), int(row.seq), row.ingested_at) for row in rows]
        if window.more:  # a PR the query names is found however old it is
            hits += await _named(conn, query, ranker, now, {hit.seq for hit in hits})
        ranked = sorted(hits, key=sort_key, reverse=True)[: max(limit, 0)]
        return SearchResult(ranked, window.count, window.more)


# A match as the database ranks it: (score, when, seq), then its report's id.
_Ranked = tuple[float, datetime, int, int]


@dataclass(frozen=True, slots=True)
class _Window:
    """The newest matches: how many (at most WINDOW), and the best `limit` of them."""

    count: int
    best: list[_Ranked]
    more: bool  # older ones match too


def _per_row(low: int, high: int) -> bool:
    return high - low < PER_ROW_ROWS


def _matching(query: Query, dialect: str, now: datetime, seqs: Seqs, per_row: bool) -> Select[Any]:
    """The facets rows whose seq is in `seqs` that match (no columns yet)."""
    compiled = compile_query(query, dialect=dialect, now=now, seqs=seqs, per_row=per_row)
    in_range = facets.c.seq.between(*seqs)
    where = in_range if compiled.where is None else and_(in_range, compiled.where)
    return select().select_from(searched(dialect, per_row=per_row)).where(where)


# What a range of the walk is run with: its seqs, and how many rows it answers (`_ranked`).
_LOW, _HIGH = bindparam("low", type_=BigInteger), bindparam("high", type_=BigInteger)
_NEED, _LIMIT = bindparam("need", type_=Integer), bindparam("limit", type_=Integer)
_CUT = bindparam("cut", type_=Integer)  # the rows above the one whose coarse score is the cut


def _ranked(
    query: Query, terms: RankTerms, dialect: str, now: datetime, per_row: bool
) -> Select[Any]:
    """Of the newest `need` matches with seqs in [low, high], the best `limit` by the
    database's form of the rank, each row with how many there are and the oldest one's seq.
    Built once for every range of a walk (twice on PostgreSQL: row by row and not), and kept
    for the next search of the same query (built.py).

    The rank is the coarse score (exact hits and the words' places, an integer) plus how often
    the words are there (below 1): the second is counted only for the rows whose coarse score
    reaches the `limit`-th best (`cut`), since no other can rank above them, so a word that
    most matches hold in a long section costs a count in a few rows, not in every match."""
    seqs = (_LOW, _HIGH)
    coarse: ColumnElement[Any] = literal(0)
    if terms.scored:  # else every match scores 0: the newest first
        coarse = score(terms, dialect=dialect)
    newest = (
        _matching(query, dialect, now, seqs, per_row)
        .add_columns(coarse.label("coarse"), facets.c.at, facets.c.seq, facets.c.report_id)
        .order_by(facets.c.seq.desc())
        .limit(_NEED)
        .cte("newest")
    )
    rank: ColumnElement[Any] = newest.c.coarse
    if terms.words:
        cut = (
            select(newest.c.coarse)
            .order_by(newest.c.coarse.desc())
            .offset(_CUT)
            .limit(1)
            .scalar_subquery()
        )
        row = facets.alias("ranked")
        counted = (
            select(frequency(terms, dialect=dialect, row=row))
            .where(row.c.report_id == newest.c.report_id)
            .scalar_subquery()
        )
        rank = case(
            (newest.c.coarse >= func.coalesce(cut, -1), newest.c.coarse + counted),
            else_=newest.c.coarse,
        )
    ranked = rank.label("score")
    columns = (newest.c.at, newest.c.seq, newest.c.report_id)
    return (
        select(ranked, *columns, func.count().over(), func.min(newest.c.seq).over())
        .order_by(ranked.desc(), newest.c.at.desc(), newest.c.seq.desc())
        .limit(_LIMIT)
    )


async def _window(
    conn: AsyncConnection,
    query: Query,
    now: datetime,
    terms: RankTerms,
    limit: int,
    deadline: Deadline,
) -> _Window | None:
    """The newest WINDOW matches by seq, and the best `limit` of them (None: no match).

    The walk goes back from the newest seq in up to RANGES ranges, then asks for the rest at
    once: a query most reports match stops after a range or two, reading only those ranges'
    postings, and one few reports match (a range came back SPARSE) is answered through the
    indexes. The first range holds FIRST_CHUNK seqs, each next one as many as the matches so
    far say the window still needs, times MARGIN: the walk reads about the rows it needs
    whatever plan the database picks for a range. Each range is read once: it answers with
    how many match (no more than the window still needs), the oldest of them, and their best
    few."""
    dialect = conn.dialect.name
    ends = select(
        select(func.min(facets.c.seq)).scalar_subquery(),  # each its own O(log n) lookup
        select(func.max(facets.c.seq)).scalar_subquery(),
    )
    oldest, newest = (await conn.execute(ends)).one()
    if newest is None or oldest is None:
        return None
    low, high = int(oldest), int(newest)
    best: list[_Ranked] = []
    found, scanned, size, walked = 0, 0, FIRST_CHUNK, 0
    statements: dict[bool, Select[Any]] = {}
    while high >= low and found < WINDOW:
        deadline.check()
        # The last step takes all the rest at once: what is left is found through the indexes
        # (the number, the full-text lists), not range by range.
        start = low if walked >= RANGES else max(low, high - size + 1)
        need = WINDOW - found
        # One more than needed says whether older ones match; one more than the limit, so
        # that the limit is left once that one is set aside.
        per_row = _per_row(start, high)
        if per_row not in statements:
            build = functools.partial(_ranked, query, terms, dialect, now, per_row)
            if counts_back(query):  # (its moment is in it: built for this search alone)
                statements[per_row] = build()
            else:
                statements[per_row] = RANKED.get((query, dialect, per_row), build)
        bounds = {"low": start, "high": high, "need": need + 1, "limit": limit + 1, "cut": limit}
        rows = list(await conn.execute(statements[per_row], bounds))
        count, oldest_seq = (int(rows[0][4]), int(rows[0][5])) if rows else (0, 0)
        over = count > need  # the window ends inside this range, and older ones match
        best += [
            (float(row[0]), row[1], int(row[2]), int(row[3]))
            for row in rows
            if not (over and int(row[2]) == oldest_seq)
        ][:limit]
        if over:
            return _Window(WINDOW, heapq.nlargest(limit, best), True)
        found, scanned = found + count, scanned + high - start + 1
        sparse = count * SPARSE < high - start + 1
        if not sparse:  # then found > 0
            size = math.ceil((WINDOW - found) * scanned / found * MARGIN)
        high, walked = start - 1, RANGES if sparse else walked + 1
    if not found:
        return None
    more = found >= WINDOW and await _any_in(conn, query, now, low, high)
    return _Window(found, heapq.nlargest(limit, best), more)


async def _any_in(conn: AsyncConnection, query: Query, now: datetime, low: int, high: int) -> bool:
    """Whether a report with seq in [low, high] matches: the newest FIRST_CHUNK first (where a
    query that filled the window finds one at once), then the rest."""
    split = max(low, high - FIRST_CHUNK + 1)
    for seqs in ((split, high), (low, split - 1)):
        if seqs[0] <= seqs[1]:
            per_row = _per_row(*seqs)
            probe = _matching(query, conn.dialect.name, now, seqs, per_row)
            probe = probe.add_columns(facets.c.seq)
            if (await conn.execute(probe.limit(1))).first() is not None:
                return True
    return False


async def _named(
    conn: AsyncConnection, query: Query, ranker: Ranker, now: datetime, seen: set[int]
) -> list[Hit]:
    """The matching reports whose number the query names, but for those of seq in `seen`."""
    if not ranker.terms.numbers:
        return []
    statement = select(facets.c.report_id).where(facets.c.number.in_(ranker.terms.numbers))
    ids = [int(row[0]) for row in await conn.execute(statement)]
    hits: list[Hit] = []
    for row in await _rows(conn, ids):
        report = _report(row)
        if int(row.seq) not in seen and matches(query, report, seen_at=row.ingested_at, now=now):
            hits.append(ranker.rank(report, int(row.seq), row.ingested_at))
    return hits


async def _checked(
    conn: AsyncConnection,
    query: Query,
    compiled: Compiled,
    ranker: Ranker,
    limit: int,
    now: datetime,
    deadline: Deadline,
) -> SearchResult:
    """The inexact path: each candidate the SQL form admits is checked with `matches`, a
    chunk at a time in a worker thread, within the budget."""
    candidates = select(facets.c.report_id).order_by(facets.c.report_id)
    if compiled.where is not None:
        candidates = candidates.where(compiled.where)
    ids = [int(row[0]) for row in await conn.execute(candidates)]
    best: list[tuple[tuple[float, float, int], int, Hit]] = []
    total = 0
    for start in range(0, len(ids), CHUNK):
        deadline.check()
        rows = await _rows(conn, ids[start : start + CHUNK])
        for hit in await asyncio.to_thread(_check, rows, query, ranker, now, deadline):
            total += 1
            entry = (sort_key(hit), total, hit)
            if len(best) < limit:
                heapq.heappush(best, entry)
            elif limit > 0 and entry[0] > best[0][0]:
                heapq.heapreplace(best, entry)
    ranked = [hit for _, _, hit in sorted(best, key=lambda e: e[0], reverse=True)]
    return SearchResult(ranked, total)


def _check(
    rows: list[Any], query: Query, ranker: Ranker, now: datetime, deadline: Deadline
) -> list[Hit]:
    """The rows that match `query`, ranked (run in a worker thread; stops at the deadline)."""
    hits: list[Hit] = []
    for row in rows:
        deadline.check()
        report = _report(row)
        if matches(query, report, seen_at=row.ingested_at, now=now):
            hits.append(ranker.rank(report, int(row.seq), row.ingested_at))
    return hits


def _report(row: Any) -> Report:
    return Report.model_validate(row.data, context=STORED)


async def _rows(conn: AsyncConnection, ids: list[int]) -> list[Any]:
    """These reports' rows (id, data, seq, ingested_at)."""
    if not ids:
        return []
    statement = select(reports.c.id, reports.c.data, reports.c.seq, reports.c.ingested_at)
    return list(await conn.execute(statement.where(reports.c.id.in_(ids))))
