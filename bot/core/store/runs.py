"""Digest runs as the scheduler and `status` see them: a subscription's latest planned run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.store.sql.bulk import among
from bot.core.store.sql.tables import digest_runs, run_members, subscriptions
from bot.core.store.statuses import RunStatus


@dataclass(frozen=True, slots=True)
class LastRun:
    scheduled_for: datetime  # the subscription's own fire time
    status: RunStatus


async def last_run(engine: AsyncEngine, subscription_id: int) -> LastRun | None:
    """The subscription's run with the latest fire time; None before the first."""
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                select(run_members.c.scheduled_for, digest_runs.c.status)
                .join(digest_runs, digest_runs.c.id == run_members.c.run_id)
                .where(run_members.c.subscription_id == subscription_id)
                .order_by(run_members.c.scheduled_for.desc())
                .limit(1)
            )
        ).first()
    return LastRun(row.scheduled_for, RunStatus(row.status)) if row is not None else None


async def last_posted_time(engine: AsyncEngine, subscription_id: int) -> datetime | None:
    """When the subscription's latest digest that posted something was due: a run with
    nothing new (or one whose notes said so to nobody) is not a digest anyone saw. None
    before the first."""
    async with engine.connect() as conn:
        found = await conn.execute(
            select(func.max(run_members.c.scheduled_for))
            .join(digest_runs, digest_runs.c.id == run_members.c.run_id)
            .where(run_members.c.subscription_id == subscription_id, digest_runs.c.messages > 0)
        )
        last: datetime | None = found.scalar()
    return last


async def last_scheduled_time(engine: AsyncEngine, subscription_id: int) -> datetime | None:
    """When the subscription's latest run was due; None before the first."""
    run = await last_run(engine, subscription_id)
    return run.scheduled_for if run is not None else None


ID_CHUNK = 500  # subscription ids per IN list


async def last_scheduled_times(
    engine: AsyncEngine, subscription_ids: Sequence[int]
) -> dict[int, datetime]:
    """`last_scheduled_time` of many subscriptions in a few statements (a scheduler tick asks
    for every due one); those without a run yet are left out."""
    found: dict[int, datetime] = {}
    async with engine.connect() as conn:
        for start in range(0, len(subscription_ids), ID_CHUNK):
            chunk = subscription_ids[start : start + ID_CHUNK]
            # Per subscription (the newest of its members, by index), never a scan of them all
            latest = (
                select(func.max(run_members.c.scheduled_for))
                .where(run_members.c.subscription_id == subscriptions.c.id)
                .scalar_subquery()
            )
            rows = await conn.execute(
                select(subscriptions.c.id, latest).where(among(subscriptions.c.id, chunk))
            )
            found.update({int(sub_id): at for sub_id, at in rows if at is not None})
    return found
