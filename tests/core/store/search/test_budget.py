"""Every query has a budget: a statement past its time is stopped and called too slow, a
statement the database refuses as too large is too complex, neither is an outage, and the
checked path runs off the event loop. Both backends."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from sqlalchemy import text

import bot.core.store.finder.search as search_module
from bot.core.query import And, Query, Text, matches
from bot.core.reports.model import Report
from bot.core.store.errors import is_outage
from bot.core.store.finder.search import search
from bot.core.store.reports import ReportStore
from bot.core.store.search.budget import QueryTooComplex, QueryTooSlow, budgeted

NOW = datetime(2026, 12, 1, tzinfo=UTC)
# A statement that would count for minutes: only the budget ends it.
ENDLESS = text(
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000000000) "
    "SELECT count(*) FROM n"
)


async def test_a_statement_past_its_budget_is_stopped_as_too_slow(store: ReportStore) -> None:
    async with store.engine.connect() as conn:
        with pytest.raises(QueryTooSlow) as caught:
            async with budgeted(conn, 0.05):
                await conn.execute(ENDLESS)
    assert not is_outage(caught.value)
    assert str(caught.value) == "the query took longer than 0.05s"
    # The connection goes back to the pool without the budget: the next statement runs.
    async with store.engine.connect() as conn:
        assert (await conn.execute(text("SELECT 1"))).scalar() == 1


async def test_a_statement_too_deep_for_sqlite_is_too_complex_not_an_outage(
    store: ReportStore,
) -> None:
    if store.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL parses a chain of 1,100 additions")
    deep = text("SELECT " + " + ".join(["1"] * 1100))
    async with store.engine.connect() as conn:
        with pytest.raises(QueryTooComplex) as caught:
            async with budgeted(conn, 5):
                await conn.execute(deep)
    assert "Expression tree is too large" in str(caught.value)
    assert not is_outage(caught.value)


async def test_a_search_with_its_budget_spent_is_too_slow(store: ReportStore) -> None:
    await store.upsert_many([(Report(repo="a/b", number=1, title="t", summary="rollout"), "")])
    for query in (Text("rollout"), Text("roll\x00out")):  # the indexed and the checked path
        with pytest.raises(QueryTooSlow):
            await search(store, query, limit=10, now=NOW, seconds=1e-9)
    assert (await search(store, Text("rollout"), limit=10, now=NOW)).total == 1


async def test_the_checked_path_runs_off_the_event_loop(
    store: ReportStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.upsert_many(
        [(Report(repo="a/b", number=n, title="t", summary="roll\x00out"), "") for n in (1, 2)]
    )
    threads: list[threading.Thread] = []

    def watched(query: Query, report: Report, **kwargs: object) -> bool:
        threads.append(threading.current_thread())
        return matches(query, report, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(search_module, "matches", watched)
    result = await search(store, And((Text("roll\x00out"),)), limit=10, now=NOW)
    assert result.total == 2
    assert threads and threading.main_thread() not in threads
