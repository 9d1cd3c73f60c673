"""among() and insert_rows(): a list or a batch of rows bound as one parameter (an array
literal or JSON text) finds and stores exactly what the ordinary statements would, whatever
the values hold: quotes, backslashes, commas and braces, NULL, times, the empty list."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Boolean, Column, Integer, MetaData, String, Table, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.store.bulk import among, insert_rows
from bot.core.store.db import create_engine
from bot.core.store.tables import UtcDateTime

NOW = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
TEXTS = ["plain", 'with "quote"', "back\\slash", "comma,brace{}", "", "NULL", " spaced ", "中文"]
metadata = MetaData()
probe = Table(
    "bulk_probe",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("label", String(50), nullable=True),
    Column("at", UtcDateTime(), nullable=True),
    Column("flag", Boolean, nullable=False),
)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url)
    async with engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    try:
        yield engine
    finally:
        await engine.dispose()


def rows() -> list[dict[str, object]]:
    return [
        {"id": n, "label": text, "at": NOW + timedelta(minutes=n), "flag": n % 2 == 0}
        for n, text in enumerate(TEXTS)
    ] + [{"id": 99, "label": None, "at": None, "flag": False}]


async def test_insert_rows_stores_every_value_as_given(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await insert_rows(conn, probe, rows())
        await insert_rows(conn, probe, [])  # nothing to do
        stored = (await conn.execute(select(probe).order_by(probe.c.id))).all()
    assert [tuple(row) for row in stored] == [tuple(row.values()) for row in rows()]


async def test_among_finds_each_value_and_nothing_else(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await insert_rows(conn, probe, rows())
        for n, text in enumerate(TEXTS):
            found = await conn.execute(select(probe.c.id).where(among(probe.c.label, [text])))
            assert found.scalars().all() == [n], text
        times = [NOW + timedelta(minutes=1), NOW + timedelta(minutes=3)]
        found = await conn.execute(select(probe.c.id).where(among(probe.c.at, times)))
        assert sorted(found.scalars()) == [1, 3]
        found = await conn.execute(select(probe.c.id).where(among(probe.c.id, [2, 99, 1000])))
        assert sorted(found.scalars()) == [2, 99]
        found = await conn.execute(select(probe.c.id).where(among(probe.c.id, [])))
        assert found.scalars().all() == []
