"""Crontab expressions → APScheduler CronTrigger, with crontab's weekday numbering.

APScheduler 3's `CronTrigger.from_crontab` treats weekday 0 as Monday; crontab (and every user)
means Sunday. Numeric weekdays are therefore translated to names before APScheduler sees them.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from apscheduler.triggers.cron import CronTrigger

_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun")
_NUMBER = re.compile(r"\d+")
_ONE_SECOND = timedelta(seconds=1)


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


def trigger(expr: str, timezone: str) -> CronTrigger:
    """A CronTrigger for `minute hour day month day-of-week` in `timezone`."""
    fields = expr.split()
    if len(fields) != 5:
        raise CronError(f"cron {expr!r} needs 5 fields (minute hour day month day-of-week)")
    minute, hour, day, month, dow = fields
    try:
        return CronTrigger(
            minute=minute,
            hour=hour,
            day=day,
            month=month,
            day_of_week=_weekday_names(dow),
            timezone=ZoneInfo(timezone),
        )
    except ValueError as exc:
        raise CronError(f"cron {expr!r}: {exc}") from exc


def next_fire(expr: str, timezone: str, after: datetime) -> datetime | None:
    fire: datetime | None = trigger(expr, timezone).get_next_fire_time(None, after)
    return fire


def previous_fire(
    expr: str, timezone: str, now: datetime, horizon_days: int = 8
) -> datetime | None:
    """The latest fire time ≤ now within the horizon (for catch-up after downtime)."""
    cron = trigger(expr, timezone)
    cursor: datetime | None = cron.get_next_fire_time(None, now - timedelta(days=horizon_days))
    latest: datetime | None = None
    while cursor is not None and cursor <= now:
        latest = cursor
        cursor = cron.get_next_fire_time(cursor, cursor + _ONE_SECOND)
    return latest
