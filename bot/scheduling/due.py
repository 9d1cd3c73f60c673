"""When a subscription is due: its latest fire up to now, on its destination's working time.

A fire time is looked for within CATCH_UP_HORIZON_DAYS back (a weekly schedule missed once
still catches up); a schedule that never fires is judged once a day (ScheduleGate) and skipped.
The cron arithmetic itself is core/timing's.

A new subscription catches up nothing from before the day it was made (a weekly made on
Monday does not post last Friday's digest; a daily made at 09:29 still gets today's 09:00),
and its first digest covers one window of its cadence: the PRs merged since its previous fire,
not the whole history a store may hold (`first_window`); the digest says so.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast
from zoneinfo import ZoneInfo

from bot.core.calendar import HolidaySource, WorkingCalendar
from bot.core.delivery.runs import Due
from bot.core.logs import log
from bot.core.store.subscriptions import Subscription
from bot.core.timing.cron import (
    CronError,
    cadence_over_a_day,
    next_fire,
    next_real_fire,
    previous_fire,
    previous_real_fire,
)
from bot.core.timing.working import WorkingFire

logger = logging.getLogger("prdigest.scheduler")

CATCH_UP_HORIZON_DAYS = 8  # a weekly schedule missed once still catches up
FIRST_WINDOW_MAX_DAYS = 32  # a first digest looks back one cadence window, a month at most
SCHEDULE_RECHECK = timedelta(days=1)  # how long a schedule's "fires / never fires" verdict holds
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


def due_item(
    sub: Subscription, fire: datetime, synthesis: bool, last: datetime | None
) -> Due | None:
    """`sub` due at `fire` (its latest), given its last run: None when that ran already, or
    when it is its first and the fire predates it; a first digest starts one window back. A
    weekly digest knows its week (its header shows the period, not one day)."""
    if sub.instant:
        return Due(sub, fire, synthesis)
    period = first_window(sub, fire) if synthesis else None
    if last is None:
        if predates(sub, fire):
            return None
        return Due(sub, fire, synthesis, first_window(sub, fire), period)
    return Due(sub, fire, synthesis, None, period) if fire > last else None


def predates(sub: Subscription, fire: datetime) -> bool:
    """Whether `fire` falls on a day before the one `sub` was made (in its zone)."""
    if sub.created_at is None:
        return False
    zone = ZoneInfo(sub.timezone)
    return fire.astimezone(zone).date() < sub.created_at.astimezone(zone).date()


def first_window(sub: Subscription, fire: datetime) -> datetime:
    """Where the first digest of `sub`, due at `fire`, starts: its schedule's fire before
    that one, so that it covers one window of its cadence as every later digest does."""
    return _window_start(sub.schedule, sub.timezone, fire)


@functools.lru_cache(maxsize=1024)
def _window_start(schedule: str, timezone: str, fire: datetime) -> datetime:
    try:
        start = previous_fire(schedule, timezone, fire - _ONE_SECOND, FIRST_WINDOW_MAX_DAYS)
    except CronError:
        start = None
    return start or fire - timedelta(days=FIRST_WINDOW_MAX_DAYS)


_ONE_SECOND = timedelta(seconds=1)


@functools.lru_cache(maxsize=1024)
def latest_fire(
    schedule: str, timezone: str, now: datetime, holidays: HolidaySource | None = None
) -> datetime | None:
    """The schedule's latest fire up to `now` within the catch-up horizon (a work-week cron's
    on make-up working days too), once per (schedule, zone, tick, holidays)."""
    return previous_real_fire(schedule, timezone, now, CATCH_UP_HORIZON_DAYS, holidays)


def latest_possible_fire(
    schedule: str, timezone: str, now: datetime, sources: Iterable[HolidaySource | None]
) -> datetime | None:
    """The latest fire up to `now` at which a subscription on this schedule and zone may be
    due, whichever of the holiday calendars `sources` it keeps (a make-up working day can
    be its latest fire): a subscription whose runs reached it is not due (`due_item`). None
    when no calendar gives one, or the schedule cannot be read."""
    try:
        fires = [latest_fire(schedule, timezone, now, cast(Hashable, h)) for h in sources]
    except CronError:
        return None
    return max((fire for fire in fires if fire is not None), default=None)


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
