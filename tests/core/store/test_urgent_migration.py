"""Migration 0017 on a store 0016 made: every subscription keeps its destination's whole
calendar (not urgent, holidays kept); the config sync then writes each channel's switches, the
store reads them back, and a downgrade takes the columns away in place."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, inspect, text

from bot.core.store.sql.db import (
    create_engine,
    migrate,
    write_transaction,
)
from bot.core.store.subscriptions import SubscriptionStore
from bot.settings import BotConfig
from tests.kits.migrations import downgrade_to, upgrade_to

NOW = datetime(2026, 12, 5, 9, tzinfo=UTC)
ADDED = {"urgent", "holidays"}


def _columns(connection: Connection) -> set[str]:
    return {column["name"] for column in inspect(connection).get_columns("subscriptions")}


async def test_0017_keeps_every_stored_subscription_on_its_whole_calendar_and_downgrades(
    database_url: str,
) -> None:
    engine = create_engine(database_url)
    try:
        async with write_transaction(engine) as conn:
            await conn.run_sync(upgrade_to, "0016")
            await conn.execute(
                text(
                    "INSERT INTO destinations (id, platform, target, active,"
                    " consecutive_failures, created_at, updated_at)"
                    " VALUES (1, 'console', 'rl', true, 0, :at, :at)"
                ),
                {"at": NOW},
            )
            await conn.execute(
                text(
                    "INSERT INTO subscriptions (id, destination_id, number, name, origin,"
                    " filters, schedule, cadence, timezone, locale, layout, verbosity, owner,"
                    " post_empty, locked, watermark, created_at, updated_at)"
                    " VALUES (1, 1, 1, 'all', 'chat', '{}', 'now', 'now', 'UTC', 'en', 'flat',"
                    " 'standard', NULL, false, false, 0, :at, :at)"
                ),
                {"at": NOW},
            )
        await migrate(engine)
        [stored] = await SubscriptionStore(engine).all()
        assert (stored.name, stored.urgent, stored.holidays) == ("all", False, True)

        async with write_transaction(engine) as conn:
            await conn.run_sync(downgrade_to, "0016")
            assert not await conn.run_sync(_columns) & ADDED
            count = (await conn.execute(text("SELECT count(*) FROM subscriptions"))).scalar_one()
            assert count == 1
    finally:
        await engine.dispose()


async def test_the_config_sync_writes_each_channels_switches(database_url: str) -> None:
    engine = create_engine(database_url)
    channel = {"platform": "console", "target": "rl", "timezone": "UTC", "locale": "en"}
    config = BotConfig.model_validate(
        {
            "channels": [
                {**channel, "name": "rl-breaking", "cadence": "now", "urgent": True},
                {**channel, "name": "rl-daily", "cadence": "daily 09:00", "holidays": False},
            ]
        }
    )
    try:
        await migrate(engine)
        store = SubscriptionStore(engine)
        synced = {s.name: (s.urgent, s.holidays) for s in await store.sync_config(config)}
        assert synced == {"rl-breaking": (True, True), "rl-daily": (False, False)}
        calmer = config.model_copy(
            update={"channels": [c.model_copy(update={"urgent": False}) for c in config.channels]}
        )
        synced = {s.name: (s.urgent, s.holidays) for s in await store.sync_config(calmer)}
        assert synced == {"rl-breaking": (False, True), "rl-daily": (False, False)}, "updated"
    finally:
        await engine.dispose()
