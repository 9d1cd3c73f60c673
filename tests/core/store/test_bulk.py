"""among() and insert_columns(): a list or a batch of rows bound as one parameter each (a
typed array, JSON text) finds and stores exactly what the ordinary statements would, whatever
the values hold: quotes, backslashes, commas and braces, NULL (in text, times and integers),
flags, times, the empty list, a column alike in every row."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Boolean, Column, Integer, MetaData, String, Table, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.store.sql.bulk import among, insert_columns
from bot.core.store.sql.tables import UtcDateTime
from tests.kits.probe import engine_with

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
    Column("part", Integer, nullable=True),
)


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    async with engine_with(database_url, metadata) as engine:
        yield engine


def rows() -> list[dict[str, object]]:
    given: list[dict[str, object]] = [
        {"id": n, "label": text, "at": NOW + timedelta(minutes=n), "flag": n % 2 == 0,
         "part": None if n % 3 else n}
        for n, text in enumerate(TEXTS)
    ]  # fmt: skip
    return [*given, {"id": 99, "label": None, "at": None, "flag": False, "part": None}]


def columns(given: list[dict[str, object]]) -> dict[str, list[object]]:
    return {name: [row[name] for row in given] for name in given[0]}


async def stored(engine: AsyncEngine) -> list[tuple[object, ...]]:
    async with engine.connect() as conn:
        return [tuple(row) for row in await conn.execute(select(probe).order_by(probe.c.id))]


async def test_insert_columns_stores_every_value_as_given(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await insert_columns(conn, probe, columns(rows()))
        await insert_columns(conn, probe, {"id": [], "flag": []})  # nothing to do
    assert await stored(engine) == [tuple(row.values()) for row in rows()]


async def test_columns_alike_in_every_row_and_a_single_row_are_stored_too(
    engine: AsyncEngine,
) -> None:
    alike = [{"id": n, "label": "same", "at": NOW, "flag": True, "part": n} for n in range(3)]
    one = [{"id": 10, "label": 'q"', "at": NOW, "flag": False, "part": None}]
    async with engine.begin() as conn:
        await insert_columns(conn, probe, columns(alike))
        await insert_columns(conn, probe, columns(one))
    assert await stored(engine) == [tuple(row.values()) for row in alike + one]


async def test_among_finds_each_value_and_nothing_else(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await insert_columns(conn, probe, columns(rows()))
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


async def test_a_column_of_texts_without_quotes_or_backslashes_is_stored_as_given(
    engine: AsyncEngine,
) -> None:
    plain = [text for text in TEXTS if '"' not in text and "\\" not in text]  # (its fast path)
    given: list[dict[str, object]] = [
        {"id": n, "label": text, "at": NOW, "flag": True, "part": None}
        for n, text in enumerate(plain)
    ]
    async with engine.begin() as conn:
        await insert_columns(conn, probe, columns(given))
        found = await conn.execute(select(probe.c.id).where(among(probe.c.label, plain)))
        assert sorted(found.scalars()) == list(range(len(plain)))
    assert await stored(engine) == [tuple(row.values()) for row in given]
