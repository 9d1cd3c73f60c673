"""Migration 0016 on a store 0015 indexed: the whole index is filled again, word lists
included, so a search finds `ci` whole in reports stored before the upgrade; a downgrade
takes the word lists away and leaves the rest of the index answering."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, inspect, text

from bot.core.query import parse
from bot.core.reports.model import Report
from bot.core.store.finder.search import search
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate, write_transaction
from tests.kits.migrations import downgrade_to

NOW = datetime(2026, 12, 5, 9, tzinfo=UTC)


def _has_words(connection: Connection) -> bool:
    found = inspect(connection)
    if connection.dialect.name == "sqlite":
        return bool(found.has_table("report_words"))
    return "words" in {column["name"] for column in found.get_columns("report_search")}


async def _numbers(store: ReportStore, query: str) -> list[int]:
    result = await search(store, parse(query), limit=10, now=NOW)
    return sorted(hit.report.number for hit in result.hits)


async def test_0016_indexes_the_words_of_stored_reports_and_downgrades(
    database_url: str,
) -> None:
    engine = create_engine(database_url)
    try:
        await migrate(engine)
        store = ReportStore(engine)
        for number, title in ((1, "fix CI: flaky"), (2, "a specific decision")):
            await store.upsert(Report(repo="o/r", number=number, title=title), "")
        async with write_transaction(engine) as conn:
            await conn.run_sync(downgrade_to, "0015")
            assert not await conn.run_sync(_has_words)
            count = (await conn.execute(text("SELECT count(*) FROM report_facets"))).scalar()
            assert count == 2, "the rest of the index stays"

        await migrate(engine)
        async with engine.connect() as conn:
            assert await conn.run_sync(_has_words)
        assert await _numbers(store, "ci") == [1]
        assert await _numbers(store, "spec*") == [2]
        assert await _numbers(store, "decision") == [2]
    finally:
        await engine.dispose()
