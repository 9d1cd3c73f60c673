"""The one AsyncIOScheduler of the process: each source's poll and the digest tick."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

from apscheduler.schedulers.asyncio import AsyncIOScheduler

Job = Callable[[], Awaitable[object]]


def build_scheduler(
    timezone: str, tick: Job, polls: Sequence[tuple[Job, int]], tick_seconds: float = 15.0
) -> AsyncIOScheduler:
    """Jobs: each source's poll (every `interval` seconds) and the digest tick (first run at
    once). The caller polls the sources once before starting, so the first digest sees them."""
    scheduler = AsyncIOScheduler(timezone=timezone)
    for index, (poll, interval) in enumerate(polls):
        scheduler.add_job(
            poll,
            "interval",
            seconds=interval,
            id=f"source-{index}",
            coalesce=True,
            max_instances=1,
            misfire_grace_time=60,
        )
    scheduler.add_job(
        tick,
        "interval",
        seconds=tick_seconds,
        id="digest-tick",
        # "At once" on APScheduler's own clock, which reads the real time whatever clock the
        # ticker is given (a test's fast clock would otherwise put the first tick off).
        next_run_time=datetime.now(UTC),
        coalesce=True,
        max_instances=1,
        misfire_grace_time=max(60, int(tick_seconds * 4)),
    )
    return scheduler
