"""The digest tick: what is due, planned in pages (jobs.py runs it on APScheduler).

Digest schedules live in the database (config channels and chat subscriptions alike), so
instead of one APScheduler job per subscription there is one tick job: every
`delivery.tick_seconds` (15 s by default) it asks, for each subscription of an active
destination, "what is the latest fire time of its cron up to now?" and, if it has no run for
that time yet, plans one; the subscriptions of one destination due in the same tick are planned
as one run (a PR they both match shows once). A `now` subscription is due at every tick: it
takes part when something new matches it. That gives, with no extra machinery:
- catch-up: a process that was down at 09:00 fires once on start; three missed days coalesce
  into one digest (only the latest fire time is planned, and it covers everything since the
  watermark);
- replicas: every replica may plan the same (destination, time); the unique run row lets one win;
- subscription changes from chat take effect on the next tick, no job rebuild.
A subscription whose runs already reached the latest fire its schedule may be due at is not
read at all (`_fires`; the store leaves it out by an index probe), nor is a `now` one with no
report newer than its watermark, so the ticks between two fires cost next to nothing however
many subscriptions the store holds. Cron arithmetic
(crontab's days, IANA zones, DST) is bot/core/timing/cron.py's (cronsim's), not APScheduler's.

Each destination keeps a working calendar (bot/core/calendar: workdays, quiet hours, holidays;
none configured means every moment is working time, as before). A digest is planned only when
its latest fire time is working time *and* the tick's moment is: a fire on a holiday, a day off
or in quiet hours is held, and the next fire that falls on working time sends one digest
covering the whole gap (the watermark makes it cover everything since the last one). A fire
missed while the process was down is caught up at the first working tick, never inside quiet
hours or on a holiday. A `now` subscription holds while the moment is not working time and
posts what it held at the first working tick: the end of the quiet hours on a working day, or
the start of the next working day (its midnight, or the end of its quiet hours when they run
past midnight). Each subscription is judged on its own view of that calendar
(`CalendarBook.for_subscription`): an urgent one's has no quiet time and one with
`holidays: false` no holidays, so an urgent `now` route posts alone inside the quiet hours while
the other subscriptions of its destination wait for their end.

A schedule that never fires (stored before such schedules were refused, e.g. day 31 of
February) is found by one bounded search, skipped and logged once; its verdict is kept for a
day, so broken schedules add nothing to a tick's cost. Every PRUNE_EVERY the tick also applies
the retention of `core/store/prune.py` (old digest runs, old inbound-event keys).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import datetime, timedelta

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.calendar import Block, CalendarBook, WorkingCalendar
from bot.core.clock import Clock, utc_clock
from bot.core.delivery.ahead import read_ahead
from bot.core.delivery.collect import fewer_collections
from bot.core.delivery.outbox import Due, PlannedRun, TickPlan, plan_pages
from bot.core.delivery.reading import DEFAULT_READING, ReadingPolicy
from bot.core.logs import log
from bot.core.render.renderer import Renderer
from bot.core.store.prune import prune
from bot.core.store.reports import WindowCache
from bot.core.store.runs import last_scheduled_times
from bot.core.store.subscriptions import NOW, Subscription, SubscriptionStore
from bot.scheduling.due import (
    ScheduleGate,
    due_item,
    due_time,
    latest_possible_fire,
    longer_than_a_day,
)

logger = logging.getLogger("prdigest.scheduler")

PRUNE_EVERY = timedelta(hours=1)  # how often the tick applies the retention (service clock)
TICK_PAGE = 2000  # destinations a tick reads and plans at a time
TICK_SUMMARY_FROM = 100  # a tick that planned this many runs logs one summary line too


class DigestTicker:
    """Plans the digest runs that are due; the Deliverer sends what they queue."""

    def __init__(
        self,
        engine: AsyncEngine,
        subscriptions: SubscriptionStore,
        renderer: Renderer,
        clock: Clock = utc_clock,
        calendars: CalendarBook | None = None,
        reading: ReadingPolicy = DEFAULT_READING,
    ) -> None:
        self.engine = engine
        self.subscriptions = subscriptions
        self.renderer = renderer
        self.clock = clock
        self.calendars = calendars or CalendarBook()
        self.reading = reading
        self.destinations = 0  # how many the last tick read (the planner's `auto` looks)
        self.gate = ScheduleGate()
        self.pruned_at: datetime | None = None
        self.held: dict[int, Block] = {}  # subscription -> the last hold logged for it
        self._blocks: dict[int, Block | None] = {}  # calendar -> its verdict on this page's now

    def _working(self, sub: Subscription, now: datetime) -> WorkingCalendar | None:
        """The subscription's calendar when `now` is working time; None while it holds (logged
        once per subscription, day and reason: a holiday, a day off, quiet hours)."""
        calendar, blocks = self.calendars.for_subscription(sub), self._blocks
        if id(calendar) not in blocks:  # once per calendar and page (the book keeps each one)
            blocks[id(calendar)] = calendar.block(now)
        block = blocks[id(calendar)]
        if block is None:
            self.held.pop(sub.id, None)
            return calendar
        if self.held.get(sub.id) != block:
            self.held[sub.id] = block
            log(
                logger,
                "digest.held_by_calendar",
                destination=sub.label,
                reason=block.kind.value,
                holiday=block.name or None,
                day=block.day.isoformat(),
            )
        return None

    async def _due(self, active: Sequence[Subscription], now: datetime) -> dict[int, list[Due]]:
        """The due subscriptions, by destination."""
        due: dict[int, list[Due]] = {}
        working = []
        self._blocks = {}
        for sub in active:
            if not self.gate.allows(sub, now):
                continue
            if sub.plan_retry_at is not None and now < sub.plan_retry_at:
                continue  # its digest failed to plan: tried again then (plan_failures.py)
            calendar = self._working(sub, now)
            if calendar is not None:  # else held by its calendar: nothing to read
                working.append((sub, calendar))
        ids = [sub.id for sub, _ in working if not sub.instant]
        lasts = await last_scheduled_times(self.engine, ids)  # one read, not one per subscription
        # What the fire depends on besides the last run: worked out once per schedule, zone
        # and calendar (a page of 2,000 subscriptions shares a handful).
        fires: dict[tuple[str, str, int], tuple[datetime | None, bool]] = {}
        for sub, calendar in working:
            key = (sub.schedule, sub.timezone, id(calendar))
            known = fires.get(key)
            if known is None:
                fire = due_time(sub, now, None, calendar)
                known = fires[key] = (fire, fire is not None and longer_than_a_day(sub, fire))
            fire, synthesis = known
            item = None if fire is None else due_item(sub, fire, synthesis, lasts.get(sub.id))
            if item is not None:
                due.setdefault(sub.destination_id, []).append(item)
        return due

    def _fires(self, pairs: set[tuple[str, str]], now: datetime) -> dict[tuple[str, str], datetime]:
        """The latest fire each stored (schedule, zone) may be due at now (whatever holiday
        calendar its subscriptions keep): the pages leave out the subscriptions whose runs
        reached it, so a tick with nothing due reads next to nothing. A `now` schedule, or
        one without such a fire, is not here: its subscriptions are read and judged (a `now`
        one only when a report is newer than its watermark)."""
        sources = self.calendars.holiday_sources()
        fires = {}
        for schedule, zone in pairs:
            fire = None if schedule == NOW else latest_possible_fire(schedule, zone, now, sources)
            if fire is not None:
                fires[(schedule, zone)] = fire
        return fires

    async def tick(self) -> list[PlannedRun]:
        """Plan what is due, a page of destinations at a time (bounded memory); the pages share
        the windows read and the editions rendered."""
        now, started = self.clock(), time.monotonic()
        planned: list[PlannedRun] = []
        plan = TickPlan(self.renderer, now, WindowCache(), self.reading)
        count = 0
        schedules = await self.subscriptions.schedules()  # (the gate keeps their verdicts)
        fires = self._fires(schedules, now)

        async def due_pages() -> AsyncIterator[dict[int, list[Due]]]:
            nonlocal count
            async for page in self.subscriptions.active_pages(TICK_PAGE, fires):
                count += page.destinations
                yield await self._due(page.subscriptions, now)

        def logged(due: Mapping[int, Sequence[Due]], runs: Mapping[int, PlannedRun]) -> None:
            planned.extend(self._logged(due, runs))

        with fewer_collections():  # the next page is read while this one plans
            await plan_pages(self.engine, read_ahead(due_pages()), plan, logged)
        self.gate.keep_only(schedules, count)
        self.destinations = count
        created = [run for run in planned if run.created]
        if len(created) >= TICK_SUMMARY_FROM:  # a big tick also says what it came to, once
            log(
                logger,
                "digest.tick_planned",
                runs=len(created),
                messages=sum(run.messages for run in created),
                editions=plan.book.rendered,
                seconds=round(time.monotonic() - started, 1),
            )
        await self.prune_if_due(now)
        return planned

    @staticmethod
    def _logged(
        due_now: Mapping[int, Sequence[Due]], runs: Mapping[int, PlannedRun]
    ) -> list[PlannedRun]:
        """The runs planned (or found planned by another replica), each logged."""
        planned = []
        logging_each = logger.isEnabledFor(logging.INFO)  # 100,000 lines are not built unread
        for destination_id, due in due_now.items():
            run = runs[destination_id]
            if not run.created and all(item.subscription.instant for item in due):
                continue
            planned.append(run)
            if logging_each:
                log(
                    logger,
                    "digest.planned" if run.created else "digest.skipped_duplicate",
                    destination=" + ".join(item.subscription.label for item in due),
                    scheduled_for=max(item.fire for item in due).isoformat(),
                    entries=run.entries,
                    messages=run.messages,
                    status=run.status.value if run.status else None,
                )
        return planned

    async def prune_if_due(self, now: datetime) -> None:
        """Apply the retention once every PRUNE_EVERY; a database error waits for the next."""
        if self.pruned_at is not None and now - self.pruned_at < PRUNE_EVERY:
            return
        self.pruned_at = now
        try:
            pruned = await prune(self.engine, now)
        except SQLAlchemyError as exc:
            log(logger, "store.prune_failed", logging.WARNING, error=str(exc)[:300])
            return
        if pruned.runs or pruned.events:
            log(logger, "store.pruned", digest_runs=pruned.runs, event_keys=pruned.events)
