"""The one AsyncIOScheduler of the process: source polls and the digest tick.

Digest schedules live in the database (config channels and chat subscriptions alike), so
instead of one APScheduler job per destination there is one tick job: every `delivery.tick_seconds`
(15 s by default) it asks,
for each active destination, "what is the latest fire time of its cron up to now?" and, if no
run exists for that time yet, plans one. That gives, with no extra machinery:
- catch-up: a process that was down at 09:00 fires once on start; three missed days coalesce
  into one digest (only the latest fire time is planned, and it covers everything since the
  watermark);
- replicas: every replica may plan the same (destination, time); the unique run row lets one win;
- subscription changes from chat take effect on the next tick, no job rebuild.
Cron arithmetic (day names, IANA zones, DST) is APScheduler's CronTrigger.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.clock import Clock, utc_clock
from bot.core.delivery.outbox import PlannedRun, plan_digest
from bot.core.render.renderer import Renderer
from bot.core.store.destinations import Destination, DestinationStore
from bot.core.store.reports import WindowCache
from bot.core.store.runs import last_scheduled_time
from bot.cron import CronError, previous_fire
from bot.logs import log

logger = logging.getLogger("prdigest.scheduler")

CATCH_UP_HORIZON_DAYS = 8  # a weekly schedule missed once still catches up


def due_time(dest: Destination, now: datetime, last: datetime | None) -> datetime | None:
    """The fire time to run now for `dest`, or None if its latest one already ran."""
    try:
        fire = previous_fire(dest.schedule, dest.timezone, now, CATCH_UP_HORIZON_DAYS)
    except CronError:
        return None
    if fire is None or (last is not None and fire <= last):
        return None
    return fire


class DigestTicker:
    """Plans the digest runs that are due; the Deliverer sends what they queue."""

    def __init__(
        self,
        engine: AsyncEngine,
        destinations: DestinationStore,
        renderer: Renderer,
        clock: Clock = utc_clock,
    ) -> None:
        self.engine = engine
        self.destinations = destinations
        self.renderer = renderer
        self.clock = clock

    async def tick(self) -> list[PlannedRun]:
        now = self.clock()
        planned: list[PlannedRun] = []
        windows = WindowCache()
        for dest in await self.destinations.all(active_only=True):
            fire = due_time(dest, now, await last_scheduled_time(self.engine, dest.id))
            if fire is None:
                continue
            run = await plan_digest(self.engine, dest, fire, self.renderer, now, windows)
            planned.append(run)
            log(
                logger,
                "digest.planned" if run.created else "digest.skipped_duplicate",
                destination=dest.label,
                scheduled_for=fire.isoformat(),
                entries=run.entries,
                messages=run.messages,
                status=run.status.value if run.status else None,
            )
        return planned


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
