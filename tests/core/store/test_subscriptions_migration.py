"""Migration 0009 on a store the previous version made: every destination becomes a destination
with one subscription (its filter, schedule, locale and watermark), a chat's own subscription
stays the chat's, and a run in flight keeps its rows and, once delivered, moves the
subscription's watermark as it moved the destination's."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, inspect, select, text

from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.ledger import unfinished_count
from bot.core.models import Layout, Locale, Origin, Platform
from bot.core.store.sql.db import create_engine, migrate, write_transaction
from bot.core.store.sql.tables import digest_runs, run_members
from bot.core.store.subscriptions import SubscriptionStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from tests.kits.delivery import FakeClock, ScriptedSender, run_until_idle
from tests.kits.migrations import upgrade_to

NOW = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)
OLD_DESTINATION = text(
    """
    INSERT INTO destinations (id, platform, target, name, origin, filters, schedule, timezone,
        locale, post_empty, active, consecutive_failures, watermark, created_at, updated_at)
    VALUES (:id, :platform, :target, :name, :origin, :filters, :schedule, :tz, :locale,
        :post_empty, :active, 0, :watermark, :at, :at)
    """
)
OLD_RUN = text(
    """
    INSERT INTO digest_runs (id, destination_id, scheduled_for, created_at, from_seq, to_seq,
        entries, messages, status)
    VALUES (7, 1, :at, :at, 3, 9, 2, 2, 'pending')
    """
)
OLD_ROW = text(
    """
    INSERT INTO outbox (run_id, destination_id, part, payload, status, attempts,
        next_attempt_at, created_at)
    VALUES (7, 1, :part, :payload, :status, 0, :at, :at)
    """
)


def _columns(connection: Connection) -> set[str]:
    return {c["name"] for c in inspect(connection).get_columns("destinations")}


async def test_each_destination_becomes_one_subscription_and_a_run_in_flight_finishes(
    database_url: str,
) -> None:
    engine = create_engine(database_url)
    try:
        async with write_transaction(engine) as conn:
            await conn.run_sync(upgrade_to, "0007")
        filters = '{"repos": [], "tags": ["rollout"], "exclude_tags": ["ci"], "max_items": 12}'
        common = {"at": NOW, "post_empty": False, "active": True, "filters": filters}
        async with write_transaction(engine) as conn:  # rows as the version before wrote them
            await conn.execute(
                OLD_DESTINATION,
                {
                    **common,
                    "id": 1,
                    "platform": "console",
                    "target": "stdout",
                    "name": "team",
                    "origin": "config",
                    "schedule": "0 9 * * mon-fri",
                    "tz": "Asia/Shanghai",
                    "locale": "zh",
                    "watermark": 3,
                },
            )
            await conn.execute(
                OLD_DESTINATION,
                {
                    **common,
                    "id": 2,
                    "platform": "telegram",
                    "target": "-100",
                    "name": None,
                    "origin": "chat",
                    "schedule": "15 8 * * *",
                    "tz": "UTC",
                    "locale": "en",
                    "watermark": 5,
                },
            )
            await conn.execute(
                OLD_DESTINATION,
                {
                    **common,
                    "id": 3,
                    "platform": "slack",
                    "target": "C0STOPPED",
                    "name": None,
                    "origin": "chat",
                    "schedule": "0 9 * * *",
                    "tz": "UTC",
                    "locale": "en",
                    "watermark": 5,
                    "active": False,
                },
            )
            await conn.execute(
                text("UPDATE destinations SET deactivated_reason = :why WHERE id = 3"),
                {"why": "unsubscribed from the chat"},
            )
            await conn.execute(OLD_RUN, {"at": NOW})
            for part, status in enumerate(("sent", "pending")):
                payload = f'{{"text": "part {part}"}}'
                await conn.execute(
                    OLD_ROW, {"part": part, "status": status, "at": NOW, "payload": payload}
                )
        await migrate(engine)

        team, chat = await SubscriptionStore(engine).all()  # the stopped chat has none
        stopped = await DestinationStore(engine).find(Platform.SLACK, "C0STOPPED")
        assert stopped is not None and stopped.active and stopped.deactivated_reason is None
        assert (team.name, team.origin, team.number, team.platform) == (
            "team",
            "config",
            1,
            Platform.CONSOLE,
        )
        assert (team.schedule, team.cadence, team.timezone, team.locale) == (
            "0 9 * * mon-fri",
            "0 9 * * mon-fri",
            "Asia/Shanghai",
            Locale.ZH,
        )
        assert (team.filter.tags, team.filter.exclude_tags, team.filter.max_items) == (
            ("rollout",),
            ("ci",),
            12,
        )
        assert (team.watermark, team.owner, team.locked) == (3, None, False)
        assert team.layout is Layout.FLAT and team.origin is Origin.CONFIG
        assert (chat.name, chat.watermark) == ("telegram:-100", 5)
        assert chat.origin is Origin.CHAT
        async with engine.connect() as conn:
            assert "watermark" not in await conn.run_sync(_columns)
            [member] = (await conn.execute(select(run_members))).all()
        assert (member.run_id, member.subscription_id, member.from_seq, member.to_seq) == (
            7,
            team.id,
            3,
            9,
        )

        clock = FakeClock(NOW)
        sender = ScriptedSender(clock)
        await run_until_idle(Deliverer(engine, {sender.platform: sender}, "w", clock), clock, 10)
        assert [call.payload["text"] for call in sender.calls] == ["part 1"]  # resumed, not redone
        assert await unfinished_count(engine) == 0
        async with engine.connect() as conn:
            run_status = (await conn.execute(select(digest_runs.c.status))).scalar()
        assert run_status == "delivered"
        team_now = await SubscriptionStore(engine).get(team.id)
        assert team_now is not None and team_now.watermark == 9
    finally:
        await engine.dispose()
