"""Digest runs as the scheduler and `status` see them: a destination's latest planned run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.store.tables import digest_runs


@dataclass(frozen=True, slots=True)
class LastRun:
    scheduled_for: datetime
    status: str


async def last_run(engine: AsyncEngine, destination_id: int) -> LastRun | None:
    """The destination's run with the latest `scheduled_for`; None before the first."""
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                select(digest_runs.c.scheduled_for, digest_runs.c.status)
                .where(digest_runs.c.destination_id == destination_id)
                .order_by(digest_runs.c.scheduled_for.desc())
                .limit(1)
            )
        ).first()
    return LastRun(row.scheduled_for, row.status) if row is not None else None


async def last_scheduled_time(engine: AsyncEngine, destination_id: int) -> datetime | None:
    """When the destination's latest run was due; None before the first."""
    run = await last_run(engine, destination_id)
    return run.scheduled_for if run is not None else None
