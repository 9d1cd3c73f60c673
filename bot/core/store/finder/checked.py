"""The checked path for a query of words and phrases alone (`"weight sync"`, `"rollout ci" OR
权重`): each candidate is checked on the text its facets row holds, not on the whole report.

The facets row keeps every searched text (the title, the one-liner, the recommendation, and
`details`: the other fields and each related-PR line and key-file note, joined by SEP), as
normalized text in which NUL and SEP inside a value stand as STAND_IN. A word or phrase that
holds none of the three is found in that text exactly where text.contains finds it in the
report's (all three are non-word characters, as SEP is between two lines), so the answer is
`matches`'s; the rank is the Ranker's, read off the same row. Only the best `limit` reports
are then read and validated: a phrase 400 reports match reads 400 short rows, not 400 reports.
"""

from __future__ import annotations

import asyncio
import heapq
from typing import Any, Final

from sqlalchemy import ColumnElement, select
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.core.query import And, Not, Or, Query, Text
from bot.core.query.text import SEP, contains
from bot.core.query.values import as_utc
from bot.core.store.finder.rank import EPOCH, Ranker
from bot.core.store.search.budget import Deadline
from bot.core.store.search.compile import EXACT_SCORE, ranked_words
from bot.core.store.search.facets import UNSTORABLE
from bot.core.store.search.relevance import relevance
from bot.core.store.sql.tables import report_facets as facets

CHUNK: Final = 2000  # facets rows read per statement
_COLUMNS = (
    facets.c.report_id,
    facets.c.seq,
    facets.c.at,
    facets.c.number,
    facets.c.tags,
    facets.c.title,
    facets.c.summary,
    facets.c.recommendation,
    facets.c.details,
)
# A match as this path ranks it: (score, when, seq), then its report's id.
Ranked = tuple[tuple[float, float, int], int]


def on_texts(query: Query) -> bool:
    """Whether `query` is words and phrases alone (any AND, OR, NOT of them), none holding a
    character the facets store in another's place."""
    if isinstance(query, Text):
        return not any(char in query.value for char in UNSTORABLE)
    if isinstance(query, Not):
        return on_texts(query.item)
    if isinstance(query, And | Or):
        return all(on_texts(item) for item in query.items)
    return False


def _holds(query: Query, texts: list[str]) -> bool:
    """evaluate.matches for a query of words and phrases, over these texts."""
    if isinstance(query, Text):
        return any(contains(text, query.value, query.prefix) for text in texts)
    if isinstance(query, Not):
        return not _holds(query.item, texts)
    if isinstance(query, And):
        return all(_holds(item, texts) for item in query.items)
    assert isinstance(query, Or)
    return any(_holds(item, texts) for item in query.items)


def _score(row: Any, ranker: Ranker) -> float:
    """Ranker.rank's score, read off the facets row."""
    terms = ranker.terms
    exact = int(row.number in terms.numbers)
    tags = set(row.tags.strip(SEP).split(SEP)) if row.tags else set()
    exact += int(not tags.isdisjoint(terms.words) or not tags.isdisjoint(terms.tags))
    exact += int(bool(terms.all_words) and all(word in row.title for word in terms.all_words))
    ranked = (row.title, row.summary, row.recommendation, row.details)
    return float(EXACT_SCORE * exact + relevance(ranked, ranked_words(terms.words)))


def _check(rows: list[Any], query: Query, ranker: Ranker, deadline: Deadline) -> list[Ranked]:
    """The rows that match, ranked (run in a worker thread; stops at the deadline)."""
    found: list[Ranked] = []
    for row in rows:
        deadline.check()
        texts = [row.title, row.summary, row.recommendation, *row.details.split(SEP)]
        if _holds(query, texts):
            when = (as_utc(row.at) - EPOCH).total_seconds()
            found.append(((_score(row, ranker), when, int(row.seq)), int(row.report_id)))
    return found


async def best_on_texts(
    conn: AsyncConnection,
    query: Query,
    where: ColumnElement[bool] | None,
    ranker: Ranker,
    limit: int,
    deadline: Deadline,
) -> tuple[list[int], int]:
    """The report ids of the best `limit` matches, best first, and how many match."""
    candidates = select(facets.c.report_id).order_by(facets.c.report_id)
    if where is not None:
        candidates = candidates.where(where)
    ids = [int(row[0]) for row in await conn.execute(candidates)]
    best: list[Ranked] = []
    total = 0
    for start in range(0, len(ids), CHUNK):
        deadline.check()
        chunk = ids[start : start + CHUNK]
        statement = select(*_COLUMNS).where(facets.c.report_id.in_(chunk))
        rows = list(await conn.execute(statement))
        found = await asyncio.to_thread(_check, rows, query, ranker, deadline)
        total += len(found)
        best = heapq.nlargest(max(limit, 0), [*best, *found])
    return [report_id for _, report_id in best], total
