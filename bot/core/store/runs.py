"""Digest runs as the scheduler sees them: which fire time of a destination was planned last."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.store.tables import digest_runs


async def last_scheduled_time(engine: AsyncEngine, destination_id: int) -> datetime | None:
    """The latest `scheduled_for` among the destination's digest runs; None before the first."""
    async with engine.connect() as conn:
        value: datetime | None = (
            await conn.execute(
                select(func.max(digest_runs.c.scheduled_for)).where(
                    digest_runs.c.destination_id == destination_id
                )
            )
        ).scalar()
    return value
