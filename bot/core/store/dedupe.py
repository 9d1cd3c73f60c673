"""At-most-once handling of inbound events: Slack `event_id`, Telegram `update_id`.

Slack retries events it thinks were not acknowledged, Telegram redelivers updates after a
non-2xx answer or a restart; both are recorded here before any work is done.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.clock import Clock, utc_clock
from bot.core.store.db import write_transaction
from bot.core.store.tables import processed_events

KEEP_FOR = timedelta(days=3)  # longer than any platform redelivers (Telegram keeps 24 h)


async def first_time(engine: AsyncEngine, key: str, clock: Clock = utc_clock) -> bool:
    """Record `key` (e.g. "slack:Ev123", "telegram:991"); True only the first time."""
    async with write_transaction(engine) as conn:
        insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
        statement = (
            insert(processed_events)
            .values(key=key[:200], created_at=clock())
            .on_conflict_do_nothing(index_elements=["key"])
            .returning(processed_events.c.key)
        )
        # rowcount is not reliable for ON CONFLICT DO NOTHING across drivers; RETURNING is.
        return (await conn.execute(statement)).scalar() is not None


async def forget_older_than(engine: AsyncEngine, clock: Clock = utc_clock) -> None:
    """Drop the keys recorded more than KEEP_FOR ago."""
    cutoff = clock() - KEEP_FOR
    async with write_transaction(engine) as conn:
        await conn.execute(delete(processed_events).where(processed_events.c.created_at < cutoff))
