"""At-most-once handling of inbound events: Slack `event_id`, Telegram `update_id`.

Slack retries events it thinks were not acknowledged, Telegram redelivers updates after a
non-2xx answer or a restart; both are recorded here before any work is done.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.clock import Clock, utc_clock
from bot.core.logs import log
from bot.core.store.errors import is_outage
from bot.core.store.health import store_problem
from bot.core.store.sql.db import write_transaction
from bot.core.store.sql.tables import processed_events

logger = logging.getLogger("prdigest.store")

KEEP_FOR = timedelta(days=3)  # longer than any platform redelivers (Telegram keeps 24 h)
FORGET_BATCH = 1000  # keys per delete statement (and per transaction)


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


async def first_time_unless_down(
    engine: AsyncEngine, key: str, clock: Clock = utc_clock
) -> bool | None:
    """`first_time`, or None when the store cannot be reached (an outage): the caller tells
    the chat the bot is unavailable instead of failing. Any other error is raised. A store
    known to be down (store/health.py) is not waited for: a SQLite write lock held by another
    connection would otherwise cost the whole busy timeout before the answer."""
    problem = await store_problem(engine)
    if problem is not None:
        log(logger, "store.dedupe_unavailable", logging.WARNING, key=key[:40], reason=problem)
        return None
    try:
        return await first_time(engine, key, clock)
    except Exception as exc:
        if not is_outage(exc):
            raise
        log(logger, "store.dedupe_unavailable", logging.WARNING, key=key[:40], reason=repr(exc))
        return None


async def forget_older_than(
    engine: AsyncEngine, clock: Clock = utc_clock, batch: int = FORGET_BATCH
) -> int:
    """Drop the keys recorded more than KEEP_FOR ago, `batch` at a time (short transactions:
    a backlog of millions never holds the write lock for long); how many were dropped."""
    cutoff = clock() - KEEP_FOR
    total, after = 0, ""
    while True:
        async with write_transaction(engine) as conn:
            # Keyset over the primary key: each batch reads on from the last, never rescans.
            keys = list(
                (
                    await conn.execute(
                        select(processed_events.c.key)
                        .where(
                            processed_events.c.key > after, processed_events.c.created_at < cutoff
                        )
                        .order_by(processed_events.c.key)
                        .limit(batch)
                    )
                ).scalars()
            )
            if keys:
                await conn.execute(delete(processed_events).where(processed_events.c.key.in_(keys)))
        total += len(keys)
        if len(keys) < batch:
            return total
        after = keys[-1]
        await asyncio.sleep(0)  # let acks run between batches
