"""Migration 0011 on a store 0009 made: every subscription reads `standard` verbosity, a run in
flight is delivered flat as it was rendered, and a downgrade takes the new columns away."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, inspect, text

from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.ledger import unfinished_count
from bot.core.models import Layout, Verbosity
from bot.core.store.sql.db import create_engine, migrate, write_transaction
from bot.core.store.subscriptions import SubscriptionStore
from tests.kits.delivery import FakeClock, ScriptedSender, run_until_idle
from tests.kits.migrations import downgrade_to, upgrade_to

NOW = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)


def _columns(connection: Connection, table: str) -> set[str]:
    return {c["name"] for c in inspect(connection).get_columns(table)}


async def test_a_0009_store_reads_standard_verbosity_and_delivers_its_queued_rows(
    database_url: str,
) -> None:
    engine = create_engine(database_url)
    try:
        async with write_transaction(engine) as conn:
            await conn.run_sync(upgrade_to, "0009")
            await conn.execute(
                text(
                    "INSERT INTO destinations (id, platform, target, active, consecutive_failures,"
                    " created_at, updated_at) VALUES (1, 'console', 'stdout', true, 0, :at, :at)"
                ),
                {"at": NOW},
            )
            await conn.execute(
                text(
                    "INSERT INTO subscriptions (id, destination_id, number, name, origin, filters,"
                    " schedule, cadence, timezone, locale, layout, post_empty, locked, watermark,"
                    " created_at, updated_at) VALUES (1, 1, 1, 'team', 'chat', :f, '0 9 * * *',"
                    " '0 9 * * *', 'UTC', 'en', 'flat', false, false, 0, :at, :at)"
                ),
                {"at": NOW, "f": '{"tags": [], "max_items": 30}'},
            )
            await conn.execute(
                text(
                    "INSERT INTO outbox (destination_id, part, payload, status, attempts,"
                    " next_attempt_at, created_at)"
                    " VALUES (1, 0, '{\"text\": \"queued before\"}', 'pending', 0, :at, :at)"
                ),
                {"at": NOW},
            )
        await migrate(engine)
        [sub] = await SubscriptionStore(engine).all()
        assert sub.layout is Layout.FLAT and sub.verbosity is Verbosity.STANDARD
        clock = FakeClock(NOW)
        sender = ScriptedSender(clock)
        await run_until_idle(Deliverer(engine, {sender.platform: sender}, "w", clock), clock, 5)
        assert [call.payload["text"] for call in sender.calls] == ["queued before"]
        assert await unfinished_count(engine) == 0

        async with write_transaction(engine) as conn:
            await conn.run_sync(downgrade_to, "0009")
            assert "verbosity" not in await conn.run_sync(_columns, "subscriptions")
            assert "reply_to_part" not in await conn.run_sync(_columns, "outbox")
            assert "forum" not in await conn.run_sync(_columns, "destinations")
    finally:
        await engine.dispose()
