"""Migration 0014 on a store 0013 made: the outbox's and the members' references to their run
(and the outbox's to its destination) become plain columns, every row stays, a member keeps
its subscription's foreign key; a downgrade puts the constraints back."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, inspect, text

from bot.core.store.sql.db import create_engine, migrate, write_transaction
from tests.kits.migrations import downgrade_to, upgrade_to

NOW = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)


def _references(connection: Connection, table: str) -> set[tuple[str, str]]:
    return {
        (fk["constrained_columns"][0], fk["referred_table"])
        for fk in inspect(connection).get_foreign_keys(table)
    }


async def _fill_0013(conn: object) -> None:
    statements = [
        "INSERT INTO destinations (id, platform, target, active, consecutive_failures,"
        " created_at, updated_at) VALUES (1, 'console', 'stdout', true, 0, :at, :at)",
        "INSERT INTO subscriptions (id, destination_id, number, name, origin, filters, schedule,"
        " cadence, timezone, locale, layout, verbosity, post_empty, locked, watermark,"
        " created_at, updated_at) VALUES (1, 1, 1, 'team', 'chat', '{}', '0 9 * * *',"
        " '0 9 * * *', 'UTC', 'en', 'flat', 'standard', false, false, 0, :at, :at)",
        "INSERT INTO digest_runs (id, destination_id, scheduled_for, created_at, from_seq,"
        " to_seq, entries, messages, status) VALUES (7, 1, :at, :at, 0, 3, 2, 1, 'pending')",
        "INSERT INTO run_members (run_id, subscription_id, scheduled_for, from_seq, to_seq)"
        " VALUES (7, 1, :at, 0, 3)",
        "INSERT INTO outbox (run_id, destination_id, part, payload, status, attempts,"
        " next_attempt_at, created_at) VALUES (7, 1, 0, '{\"text\": \"hi\"}', 'pending', 0,"
        " :at, :at)",
    ]
    for statement in statements:
        await conn.execute(text(statement), {"at": NOW})  # type: ignore[attr-defined]


async def test_0014_keeps_every_row_and_drops_only_the_hot_references(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        async with write_transaction(engine) as conn:
            await conn.run_sync(upgrade_to, "0013")
            await _fill_0013(conn)
            assert await conn.run_sync(_references, "outbox") == {
                ("run_id", "digest_runs"),
                ("destination_id", "destinations"),
            }
        await migrate(engine)
        async with engine.connect() as conn:
            assert await conn.run_sync(_references, "outbox") == set()
            assert await conn.run_sync(_references, "run_members") == {
                ("subscription_id", "subscriptions")
            }
            assert await conn.run_sync(_references, "digest_runs") == {
                ("destination_id", "destinations")
            }
            for table in ("outbox", "run_members", "digest_runs"):
                count = (await conn.execute(text(f"SELECT count(*) FROM {table}"))).scalar_one()
                assert count == 1, table
            row = (
                await conn.execute(text("SELECT run_id, destination_id, part FROM outbox"))
            ).one()
            assert tuple(row) == (7, 1, 0)

        async with write_transaction(engine) as conn:
            await conn.run_sync(downgrade_to, "0013")
            assert await conn.run_sync(_references, "run_members") == {
                ("run_id", "digest_runs"),
                ("subscription_id", "subscriptions"),
            }
            assert await conn.run_sync(_references, "outbox") == {
                ("run_id", "digest_runs"),
                ("destination_id", "destinations"),
            }
            count = (await conn.execute(text("SELECT count(*) FROM outbox"))).scalar_one()
            assert count == 1
    finally:
        await engine.dispose()
