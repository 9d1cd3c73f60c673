"""Migration 0019 on a store 0018 indexed: the whole index is filled again, so the facets hold
what ranking counts (the recommendation, the rest of the text) and the related-PR lines are
searched in reports stored before the upgrade; a downgrade takes the columns away and keeps
the rest of the index. Both backends."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, inspect, text

from bot.core.query import parse
from bot.core.reports.model import RelatedPR, Report
from bot.core.store.finder.search import search
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate, write_transaction
from tests.kits.migrations import downgrade_to

NOW = datetime(2026, 12, 5, 9, tzinfo=UTC)


def _facet_columns(connection: Connection) -> set[str]:
    return {column["name"] for column in inspect(connection).get_columns("report_facets")}


async def _numbers(store: ReportStore, query: str) -> list[int]:
    result = await search(store, parse(query), limit=10, now=NOW)
    return [hit.report.number for hit in result.hits]


async def test_0019_indexes_again_and_downgrades(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        await migrate(engine)
        store = ReportStore(engine)
        related = [RelatedPR(number=7434, title="weight sync", relation="同属权重同步链路")]
        await store.upsert_many(
            [
                (Report(repo="o/r", number=1, title="t", risks="权重", related=related), ""),
                (Report(repo="o/r", number=2, title="t", recommendation="关注权重"), ""),
            ]
        )
        async with write_transaction(engine) as conn:
            await conn.run_sync(downgrade_to, "0018")
            assert not {"recommendation", "details"} & await conn.run_sync(_facet_columns)
            count = (await conn.execute(text("SELECT count(*) FROM report_facets"))).scalar()
            assert count == 2, "the rest of the index stays"

        await migrate(engine)
        async with engine.connect() as conn:
            found = await conn.execute(
                text("SELECT recommendation FROM report_facets ORDER BY recommendation")
            )
            assert [row[0] for row in found] == ["", "关注权重"], "filled again"
        assert await _numbers(store, "权重同步") == [1]
        assert await _numbers(store, "权重") == [2, 1]  # the recommendation above the risks
    finally:
        await engine.dispose()
