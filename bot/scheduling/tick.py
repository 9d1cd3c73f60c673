"""The one AsyncIOScheduler of the process: source polls and the digest tick.

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
Cron arithmetic (crontab's days, IANA zones, DST) is bot/core/timing/cron.py's (cronsim's),
not APScheduler's.

Each destination keeps a working calendar (bot/core/calendar: workdays, quiet hours, holidays;
none configured means every moment is working time, as before). A digest is planned only when
its latest fire time is working time *and* the tick's moment is: a fire on a holiday, a day off
or in quiet hours is held, and the next fire that falls on working time sends one digest
covering the whole gap (the watermark makes it cover everything since the last one). A fire
missed while the process was down is caught up at the first working tick, never inside quiet
hours or on a holiday. A `now` subscription holds while the moment is not working time and
posts what it held at the first working tick: the end of the quiet hours on a working day, or
the start of the next working day (its midnight, or the end of its quiet hours when they run
past midnight).

A schedule that never fires (stored before such schedules were refused, e.g. day 31 of
February) is found by one bounded search, skipped and logged once; its verdict is kept for a
day, so broken schedules add nothing to a tick's cost. Every PRUNE_EVERY the tick also applies
the retention of `core/store/prune.py` (old digest runs, old inbound-event keys).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import cast

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.calendar import Block, CalendarBook, HolidaySource, WorkingCalendar
from bot.core.clock import Clock, human_time, utc_clock
from bot.core.delivery.ahead import read_ahead
from bot.core.delivery.collect import fewer_collections
from bot.core.delivery.outbox import Due, PlannedRun, TickPlan, covered_seq, plan_pages
from bot.core.delivery.reading import DEFAULT_READING, ReadingPolicy
from bot.core.digest.select import select_new
from bot.core.logs import log
from bot.core.render.renderer import Renderer
from bot.core.store.prune import prune
from bot.core.store.reports import ReportStore, WindowCache
from bot.core.store.runs import last_scheduled_times
from bot.core.store.subscriptions import Subscription, SubscriptionStore
from bot.core.timing.cron import CronError, next_fire, next_real_fire, previous_real_fire
from bot.core.timing.cron import (
    cadence_over_a_day as cadence_over_a_day,  # `prdigest digest` asks it too
)
from bot.core.timing.working import WorkingFire

logger = logging.getLogger("prdigest.scheduler")

CATCH_UP_HORIZON_DAYS = 8  # a weekly schedule missed once still catches up
SCHEDULE_RECHECK = timedelta(days=1)  # how long a schedule's "fires / never fires" verdict holds
PRUNE_EVERY = timedelta(hours=1)  # how often the tick applies the retention (service clock)
TICK_PAGE = 2000  # destinations a tick reads and plans at a time
TICK_SUMMARY_FROM = 100  # a tick that planned this many runs logs one summary line too
_GATE_SLACK = 256  # verdicts kept beyond twice the destinations before unused ones are dropped


def due_time(
    dest: Subscription,
    now: datetime,
    last: datetime | None,
    calendar: WorkingCalendar | None = None,
) -> datetime | None:
    """The fire time to run now for `dest`, or None if its latest one already ran or the
    calendar holds it (the fire, or now, is not working time); for a `now` subscription, the
    tick's time when it is working time."""
    if calendar is not None and not calendar.is_working(now):
        return None
    if dest.instant:
        return now
    try:
        holidays = cast(Hashable, calendar.holidays if calendar is not None else None)
        fire = latest_fire(dest.schedule, dest.timezone, now, holidays)  # frozen: hashable
    except CronError:
        return None
    if fire is None or (last is not None and fire <= last):
        return None
    if calendar is not None and not calendar.is_working(fire):
        return None
    return fire


@functools.lru_cache(maxsize=1024)
def latest_fire(
    schedule: str, timezone: str, now: datetime, holidays: HolidaySource | None = None
) -> datetime | None:
    """The schedule's latest fire up to `now` within the catch-up horizon (a work-week cron's
    on make-up working days too), once per (schedule, zone, tick, holidays)."""
    return previous_real_fire(schedule, timezone, now, CATCH_UP_HORIZON_DAYS, holidays)


@dataclass(frozen=True, slots=True)
class _Verdict:
    checked_at: datetime
    problem: str | None  # why the schedule never fires; None when it fires


class ScheduleGate:
    """Lets through the destinations whose schedule fires within a year. The verdict for a
    (schedule, zone) is kept SCHEDULE_RECHECK long; a refused one is logged once per
    destination."""

    def __init__(self) -> None:
        self._verdicts: dict[tuple[str, str], _Verdict] = {}
        self._logged: set[tuple[int, str, str]] = set()

    def _verdict(self, key: tuple[str, str], now: datetime) -> _Verdict:
        known = self._verdicts.get(key)
        if known is not None and now - known.checked_at < SCHEDULE_RECHECK:
            return known
        try:
            next_fire(key[0], key[1], now)
            verdict = _Verdict(now, None)
        except CronError as exc:
            verdict = _Verdict(now, str(exc))
        self._verdicts[key] = verdict
        return verdict

    def allows(self, dest: Subscription, now: datetime) -> bool:
        if dest.instant:
            return True
        key = (dest.schedule, dest.timezone)
        problem = self._verdict(key, now).problem
        if problem is None:
            return True
        if (dest.id, *key) not in self._logged:
            self._logged.add((dest.id, *key))
            log(
                logger,
                "digest.schedule_skipped",
                logging.WARNING,
                destination=dest.label,
                schedule=dest.schedule,
                reason=problem,
            )
        return False

    def keep_only(self, keys: set[tuple[str, str]], destinations: int) -> None:
        """Forget the (schedule, zone) pairs no destination uses any more, once the maps hold
        twice what is in use (they stay as small as the table; a paused destination resumed
        keeps its verdict)."""
        if len(self._verdicts) + len(self._logged) <= 2 * destinations + _GATE_SLACK:
            return
        self._verdicts = {k: v for k, v in self._verdicts.items() if k in keys}
        self._logged = {k for k in self._logged if k[1:] in keys}


def longer_than_a_day(sub: Subscription, fire: datetime) -> bool:
    """Whether the subscription's cadence is longer than a day (weekly: a digest with the weekly
    synthesis); `workdays 09:30` is daily, though Friday's next fire is on Monday."""
    return not sub.instant and cadence_over_a_day(sub.schedule, sub.timezone, fire)


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
            last = None if sub.instant else lasts.get(sub.id)
            if fire is not None and (last is None or fire > last):
                due.setdefault(sub.destination_id, []).append(Due(sub, fire, synthesis))
        return due

    async def tick(self) -> list[PlannedRun]:
        """Plan what is due, a page of destinations at a time (bounded memory); the pages share
        the windows read and the editions rendered."""
        now, started = self.clock(), time.monotonic()
        planned: list[PlannedRun] = []
        plan = TickPlan(self.renderer, now, WindowCache(), self.reading)
        schedules: set[tuple[str, str]] = set()
        count = 0

        async def due_pages() -> AsyncIterator[dict[int, list[Due]]]:
            nonlocal count
            async for page in self.subscriptions.active_pages(TICK_PAGE):
                schedules.update((sub.schedule, sub.timezone) for sub in page)
                count += len({sub.destination_id for sub in page})
                yield await self._due(page, now)

        def logged(due: Mapping[int, Sequence[Due]], runs: Mapping[int, PlannedRun]) -> None:
            planned.extend(self._logged(due, runs))

        with fewer_collections():  # the next page is read while this one plans
            await plan_pages(self.engine, read_ahead(due_pages()), plan, logged)
        self.gate.keep_only(schedules, count)
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


def next_digest(
    dest: Subscription, now: datetime, calendar: WorkingCalendar | None = None
) -> WorkingFire | None:
    """When `dest` next gets a digest: its next fire on working time. None for a `now`
    subscription, a schedule that never fires, or one never on working time."""
    if dest.instant:
        return None
    try:
        return next_real_fire(dest.schedule, dest.timezone, now, calendar)
    except CronError:
        return None


async def quiet_note(
    reports: ReportStore,
    dest: Subscription,
    now: datetime,
    last: datetime | None,
    calendar: WorkingCalendar | None = None,
) -> str | None:
    """What a restart says on a destination with no digest to catch up on, so that it is not
    silence: "nothing new since <last digest>; next digest <time>" (its next fire on working
    time). None when a digest is due now (the first tick sends it), the schedule never fires,
    or never on working time."""
    if due_time(dest, now, last, calendar) is not None:
        return None
    found = next_digest(dest, now, calendar)
    if found is None:
        return None
    upcoming = found.at
    async with reports.engine.connect() as conn:
        covered = await covered_seq(conn, dest.id)
    new = len(select_new(await reports.since(covered), dest.filter, covered, now))
    waiting = f"{new} new report(s) waiting" if new else "nothing new"
    since = f" since {human_time(last)}" if last is not None else "; no digest sent yet"
    return f"{waiting}{since}; next digest {human_time(upcoming)}"


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
