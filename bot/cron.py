"""Crontab expressions → APScheduler CronTrigger, with crontab's weekday numbering.

APScheduler 3's `CronTrigger.from_crontab` treats weekday 0 as Monday; crontab (and every user)
means Sunday. Numeric weekdays are therefore translated to names before APScheduler sees them.

APScheduler fires on a date only when the day of month, the month *and* the day of week all
match (crontab ORs day of month and day of week when both are restricted; APScheduler 3.11 does
not). Some schedules therefore never fire: `* * 31 2,4,6,9,11 *`, `0 9 30 2 *`. Unbounded,
APScheduler walks to the year 9999 looking for their next fire time (seconds of CPU per call),
so every search here carries an end date: a year ahead for the next fire time, `now` for the
previous one. A schedule with no fire time within a year is refused (`next_fire` raises).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from apscheduler.triggers.cron import CronTrigger

from bot.core.calendar import WorkingCalendar, WorkingFire, next_working_fire

_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun")
_NUMBER = re.compile(r"\d+")
_ONE_SECOND = timedelta(seconds=1)
_FOLD_STEP = timedelta(minutes=15)
_FIRST_WINDOW = timedelta(minutes=1)
_FOLD_SPAN = timedelta(hours=2)
FIRE_HORIZON = timedelta(days=366)  # a schedule must fire within this span, leap years included


class CronError(ValueError):
    """A schedule that is not a valid 5-field cron expression."""


def _weekday_names(field: str) -> str:
    def name(match: re.Match[str]) -> str:
        value = int(match.group())
        if value > 7:
            raise CronError(f"day of week {value} is out of range 0-7")
        return _DAY_NAMES[value]

    # A step like */2 counts days, not a weekday: leave the number after "/" alone.
    parts = field.split("/", 1)
    parts[0] = _NUMBER.sub(name, parts[0])
    return "/".join(parts)


def trigger(expr: str, timezone: str, end: datetime | None = None) -> CronTrigger:
    """A CronTrigger for `minute hour day month day-of-week` in `timezone`. With `end`, every
    fire-time search stops there (APScheduler gives up once its walk passes the end date)."""
    fields = expr.split()
    if len(fields) != 5:
        raise CronError(f"cron {expr!r} needs 5 fields (minute hour day month day-of-week)")
    minute, hour, day, month, dow = fields
    try:
        return CronTrigger(
            second="0",
            minute=minute,
            hour=hour,
            day=day,
            month=month,
            day_of_week=_weekday_names(dow),
            timezone=ZoneInfo(timezone),
            end_date=end,
        )
    except ValueError as exc:
        raise CronError(f"cron {expr!r}: {exc}") from exc


def _next_from(cron: CronTrigger, moment: datetime) -> datetime | None:
    """The first fire time ≥ moment. In the repeated hour of a DST fall-back APScheduler 3.11
    can answer a time *before* `moment`; step past the fold instead of trusting it."""
    fire: datetime | None = cron.get_next_fire_time(None, moment)
    probe = moment
    while fire is not None and fire < moment:
        probe += _FOLD_STEP
        fire = cron.get_next_fire_time(None, probe)
    return fire


def never_fires(expr: str) -> CronError:
    return CronError(
        f"cron {expr!r} never fires within a year: no date matches its day of month, month "
        "and day of week together (all three must match, and e.g. February has no day 30 or 31)"
    )


def next_fire(expr: str, timezone: str, after: datetime) -> datetime:
    """The first fire time ≥ after. CronError if the expression is invalid or has no fire
    time within FIRE_HORIZON: chat, config and check-config refuse such a schedule alike."""
    fire = _next_from(trigger(expr, timezone, end=after + FIRE_HORIZON), after)
    if fire is None:
        raise never_fires(expr)
    return fire


def _wall(moment: datetime) -> datetime:
    return moment.replace(tzinfo=None)


def previous_fire(
    expr: str, timezone: str, now: datetime, horizon_days: int = 8
) -> datetime | None:
    """The latest fire time ≤ now within the horizon (for catch-up after downtime).

    APScheduler only looks forward, so look back in growing windows (1 min, 4 min, … up to the
    horizon) and walk forward inside the first window that holds a fire time: a few steps
    whether the schedule fires every minute or once a week.
    On a DST fall-back day APScheduler yields a wall-clock time like 02:30 twice (CEST, then
    CET); a schedule means it once, so a repeat of the same wall-clock time is skipped.
    """
    cron = trigger(expr, timezone, end=now)  # nothing after `now` counts: the walk stops there
    horizon = timedelta(days=horizon_days)
    window = _FIRST_WINDOW
    while True:
        window = min(window, horizon)
        cursor = _next_from(cron, now - window)
        if cursor is not None and cursor <= now:
            break
        if window >= horizon:
            return None
        window *= 4
    if _offset_changed(cursor, _FOLD_SPAN):
        # A DST change just before: the same wall-clock time may have fired an hour earlier.
        cursor = _next_from(cron, cursor - _FOLD_SPAN) or cursor
    latest: datetime | None = None
    while cursor is not None and cursor <= now:
        if latest is None or _wall(cursor) != _wall(latest):
            latest = cursor
        cursor = _next_from(cron, cursor + _ONE_SECOND)
    return latest


def _offset_changed(moment: datetime, span: timedelta) -> bool:
    before = (moment - span).astimezone(moment.tzinfo)
    return before.utcoffset() != moment.utcoffset()


def next_real_fire(
    expr: str, timezone: str, after: datetime, calendar: WorkingCalendar | None
) -> WorkingFire | None:
    """The first fire time ≥ after that falls on the calendar's working time (holidays, days
    off and quiet hours skipped), with the holidays it skipped; None when no fire within a year
    is on working time. CronError as next_fire."""
    if calendar is None or calendar.always:
        return WorkingFire(next_fire(expr, timezone, after))
    return next_working_fire(calendar, expr, timezone, after, next_fire)
