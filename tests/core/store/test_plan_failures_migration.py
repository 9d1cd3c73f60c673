"""Migration 0015 on a store 0014 made: every destination starts with no failure streak, its
rows and what points at them kept, and a downgrade takes the columns away in place."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, inspect, text

from bot.core.store.sql.db import create_engine, migrate, write_transaction
from tests.kits.migrations import downgrade_to, upgrade_to

NOW = datetime(2026, 12, 5, 9, tzinfo=UTC)
ADDED = {"plan_failures", "plan_error", "plan_retry_at", "plan_told_at"}


def _columns(connection: Connection) -> set[str]:
    return {column["name"] for column in inspect(connection).get_columns("destinations")}


async def test_0015_adds_an_empty_streak_to_every_destination_and_downgrades(
    database_url: str,
) -> None:
    engine = create_engine(database_url)
    try:
        async with write_transaction(engine) as conn:
            await conn.run_sync(upgrade_to, "0014")
            await conn.execute(
                text(
                    "INSERT INTO destinations (id, platform, target, active,"
                    " consecutive_failures, created_at, updated_at)"
                    " VALUES (1, 'console', 'stdout', true, 0, :at, :at)"
                ),
                {"at": NOW},
            )
        await migrate(engine)
        async with engine.connect() as conn:
            row = (
                await conn.execute(
                    text(
                        "SELECT target, plan_failures, plan_error, plan_retry_at, plan_told_at"
                        " FROM destinations"
                    )
                )
            ).one()
            assert tuple(row) == ("stdout", 0, None, None, None)

        async with write_transaction(engine) as conn:
            await conn.run_sync(downgrade_to, "0014")
            assert not _columns_added(await conn.run_sync(_columns))
            count = (await conn.execute(text("SELECT count(*) FROM destinations"))).scalar_one()
            assert count == 1
    finally:
        await engine.dispose()


def _columns_added(columns: set[str]) -> set[str]:
    return columns & ADDED
