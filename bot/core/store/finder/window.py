"""The reports of a time window that match a query, read once (`subscribe test`'s replay).

The query's SQL form (exact, or a superset that `matches` then checks report by report) runs
over the reports whose facets time is in (start, now], within the query budget.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, and_, select

from bot.core.digest.select import StoredReport
from bot.core.query import Query, matches
from bot.core.query.evaluate import Prepared
from bot.core.query.values import as_utc
from bot.core.reports.model import STORED, Report
from bot.core.store.reports import ReportStore
from bot.core.store.search import compile_query
from bot.core.store.search.budget import Deadline, budgeted
from bot.core.store.sql.tables import report_facets as facets
from bot.core.store.sql.tables import reports


@dataclass(frozen=True, slots=True)
class WindowMatch:
    item: StoredReport
    at: datetime


async def window_matches(
    store: ReportStore, query: Query, *, now: datetime, start: datetime, seconds: float
) -> list[WindowMatch]:
    """The reports whose time is in (start, now] and that match `query`, read once."""
    async with store.engine.connect() as conn, budgeted(conn, seconds) as deadline:
        statement = _window(query, conn.dialect.name, now=now, start=start)
        rows = (await conn.execute(statement)).all()
        return await asyncio.to_thread(_checked, rows, query, now, deadline)


def _checked(
    rows: Sequence[Any], query: Query, now: datetime, deadline: Deadline
) -> list[WindowMatch]:
    """The rows that match `query` (run in a worker thread; stops at the deadline)."""
    found = []
    for row in rows:
        deadline.check()
        report = Report.model_validate(row.data, context=STORED)
        # seen_at: when the store first saw it, what `since:` reads of an unmerged report
        if matches(query, Prepared(report, as_utc(row.ingested_at)), now=now):
            item = StoredReport(report=report, seq=int(row.seq), revision=int(row.revision))
            found.append(WindowMatch(item, as_utc(row.at)))
    return found


def _window(query: Query, dialect: str, *, now: datetime, start: datetime) -> Select[Any]:
    """The window's candidate rows: the query's SQL form (exact, or a superset that `matches`
    then checks) over the reports whose facets time is in (start, now]."""
    compiled = compile_query(query, dialect=dialect, now=now)
    in_window = and_(facets.c.at > start, facets.c.at <= now)
    where = in_window if compiled.where is None else and_(in_window, compiled.where)
    return (
        select(
            reports.c.data, reports.c.seq, reports.c.revision, reports.c.ingested_at, facets.c.at
        )
        .select_from(reports.join(facets, facets.c.report_id == reports.c.id))
        .where(where)
    )
