"""Retention: old digest runs and inbound-event keys are deleted, in small batches.

Without it `digest_runs` grows by one row per destination per fire time (10,000 channels firing
every minute add 10k rows in 4 minutes) and `processed_events` by one row per inbound event.

| rows                        | kept for                 | but always kept                       |
|-----------------------------|--------------------------|---------------------------------------|
| digest_runs (+ their outbox) | RUN_RETENTION (30 days) | each subscription's latest run; a run |
|                             |                          | still pending or with a message queued |
| processed_events            | dedupe.KEEP_FOR (3 days) | -                                     |
| reading_marks               | snooze/mute: until ended; | -                                    |
|                             | read: RUN_RETENTION      |                                       |
| editions (+ messages, entries) | RUN_RETENTION           | any run still pointing at it          |

The latest run per subscription stays because `runs.last_run` (status, the scheduler's "already
ran" check and catch-up) reads it. A pruned run's outbox rows are all sent or failed (history
of its delivery) and go with it, as do its members (plain references since migration 0014:
no cascade deletes them). Each batch is its own short write transaction, so a prune never holds
SQLite's write lock for long; the same statements run on SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, and_, delete, exists, or_, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.store.dedupe import forget_older_than
from bot.core.store.sql.db import write_transaction
from bot.core.store.sql.tables import digest_runs, editions, outbox, reading_marks, run_members
from bot.core.store.statuses import UNFINISHED, RunStatus

RUN_RETENTION = timedelta(days=30)
PRUNE_BATCH = 500  # rows per delete statement (and per transaction)


@dataclass(frozen=True, slots=True)
class Pruned:
    runs: int
    events: int
    marks: int = 0


def _prunable_runs(cutoff: datetime, after: int, limit: int) -> Select[Any]:
    member, later = run_members.alias("member"), run_members.alias("later")
    someones_latest = exists().where(
        and_(
            member.c.run_id == digest_runs.c.id,
            ~exists().where(
                and_(
                    later.c.subscription_id == member.c.subscription_id,
                    later.c.scheduled_for > member.c.scheduled_for,
                )
            ),
        )
    )
    queued = exists().where(
        and_(outbox.c.run_id == digest_runs.c.id, outbox.c.status.in_(UNFINISHED))
    )
    return (
        select(digest_runs.c.id)
        .where(
            digest_runs.c.id > after,
            digest_runs.c.scheduled_for < cutoff,
            digest_runs.c.status != RunStatus.PENDING.value,
            ~someones_latest,
            ~queued,
        )
        .order_by(digest_runs.c.id)
        .limit(limit)
    )


async def prune_runs(engine: AsyncEngine, now: datetime, batch: int = PRUNE_BATCH) -> int:
    """Delete the runs scheduled before `now - RUN_RETENTION` that nothing needs any more
    (see the module docstring), with their finished outbox rows; how many runs went."""
    cutoff = now - RUN_RETENTION
    total, after = 0, 0
    while True:
        async with write_transaction(engine) as conn:
            # Keyset over the id: a batch reads on from the last one, never rescans kept rows.
            found = await conn.execute(_prunable_runs(cutoff, after, batch))
            ids = [int(run_id) for run_id in found.scalars()]
            if ids:
                await conn.execute(delete(outbox).where(outbox.c.run_id.in_(ids)))
                await conn.execute(delete(run_members).where(run_members.c.run_id.in_(ids)))
                await conn.execute(delete(digest_runs).where(digest_runs.c.id.in_(ids)))
        total += len(ids)
        if len(ids) < batch:
            await _drop_unused_editions(engine, cutoff)
            return total
        after = ids[-1]
        await asyncio.sleep(0)  # let acks and sends run between batches


async def _drop_unused_editions(engine: AsyncEngine, cutoff: datetime) -> None:
    """Editions no run points at any more (their messages and entries go with them)."""
    used = exists().where(digest_runs.c.edition_id == editions.c.id)
    async with write_transaction(engine) as conn:
        await conn.execute(delete(editions).where(editions.c.created_at < cutoff, ~used))


async def prune(engine: AsyncEngine, now: datetime) -> Pruned:
    """Apply the whole retention table once."""
    runs = await prune_runs(engine, now)
    events = await forget_older_than(engine, lambda: now)
    return Pruned(runs=runs, events=events, marks=await _forget_marks(engine, now))


async def _forget_marks(engine: AsyncEngine, now: datetime) -> int:
    """Snoozes and mutes that ended; read marks older than the runs that could show the PR
    (a PR whose digests are all pruned is never carried over again)."""
    m = reading_marks
    ended = or_(
        and_(m.c.until.is_not(None), m.c.until < now),
        and_(m.c.until.is_(None), m.c.at < now - RUN_RETENTION),
    )
    async with write_transaction(engine) as conn:
        gone = await conn.execute(delete(m).where(ended))
    return int(gone.rowcount or 0)
