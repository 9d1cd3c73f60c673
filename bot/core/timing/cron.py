"""Crontab expressions and their fire times, computed by `cronsim`.

cronsim follows Debian's cron (crontab(5)), including what it does on DST days. What that means
for a schedule here, written down in docs/calendar.md and checked against `croniter` by
tests/core/timing/test_cron_grid.py:
- fields: `minute hour day-of-month month day-of-week`; the day of week counts 0 and 7 as
  Sunday, takes names (`sun`-`sat`), ranges, ranges that wrap past Saturday (`fri-mon`, read
  here as `fri-sat,sun-mon`), steps (`*/2` is Sun, Tue, Thu, Sat; `1-5/2` is Mon, Wed, Fri),
  `1#2` (the second Monday) and `5L` (the last Friday); the day of month takes `L` (its last
  day) and `LW` (its last weekday). `?` (Quartz) is refused: write `*`;
- when the day of month and the day of week are both restricted, a day matching *either*
  fires (`0 9 13 * fri`: every 13th and every Friday). A field written with a leading `*`
  (`*/2`) counts as unrestricted, as in cron: `0 9 */2 * mon` is odd days that are Mondays;
- a *fixed-time* schedule (minute and hour both without a leading `*`: `30 2 * * *`,
  `0 9-17 * * *`) follows the wall clock: in a repeated hour (fall back) it fires once, at the
  first pass; a time inside a spring-forward gap fires at the first real instant after the
  gap (02:30 → 03:00 new time); no date is ever skipped;
- an *interval* schedule (`*/30 * * * *`, `0 * * * *`) fires at every real instant whose wall
  clock matches: every real 30 minutes across a change, twice in a repeated hour, and not in
  the hour that does not exist.

Every search is bounded: the next fire time is looked for a year ahead (HORIZON), the
previous one `horizon_days` back. A schedule with no fire time within a year is refused
(`next_fire` raises CronError, `never_fires`): chat, config and check-config alike.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta, timezone
from typing import Final
from zoneinfo import ZoneInfo

from cronsim import CronSim, CronSimError

from bot.core.calendar import HolidaySource, WorkingCalendar
from bot.core.timing.horizon import HORIZON
from bot.core.timing.working import WorkingFire, next_working_fire

DST_SLACK: Final = timedelta(hours=3)  # more than any zone's clock change
CRON_FIELDS: Final = 5
FIELD_NAMES: Final = ("minute", "hour", "day of month", "month", "day of week")
FIELD_HINTS: Final = {
    "minute": "0-59, e.g. 0, */15, 0,30",
    "hour": "0-23, e.g. 9, 9-17, */2",
    "day of month": "1-31, L (the last day) or LW (the last weekday), e.g. 1, 1-7, */2",
    "month": "1-12 or jan-dec, e.g. 1, jan-mar, */3",
    "day of week": (
        "0-7 or sun-sat (0 and 7 are Sunday), e.g. mon-fri, fri-mon, */2, 1#2 (the second"
        " Monday), 5L (the last Friday)"
    ),
}
_DAYS: Final = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_WRAP: Final = re.compile(r"^([a-z]+|\d+)-([a-z]+|\d+)(?:/(\d+))?$")
_ONE_SECOND: Final = timedelta(seconds=1)
_ONE_MINUTE: Final = timedelta(minutes=1)
_ZERO: Final = timedelta(0)
CHANGE_PROBE: Final = timedelta(days=7)  # clock changes are months apart


class CronError(ValueError):
    """A schedule that is not a valid 5-field cron expression, or never fires. `str(error)`
    is the English line (the CLI's); `key` and `params` name it for a chat's language
    (labels.error_text)."""

    def __init__(self, message: str, *, key: str = "", params: Mapping[str, str] | None = None):
        super().__init__(message)
        self.key = key
        self.params = dict(params or {})


def _day_number(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    return _DAYS.index(word) if word in _DAYS else None


def _unwrap(term: str) -> str:
    """`fri-mon` → `5,6,0,1`, `fri-mon/2` → `5,0`: a range that wraps past Saturday, which
    cronsim refuses, as the list of its days. Other terms are returned unchanged."""
    match = _WRAP.match(term)
    if match is None:
        return term
    start, end = _day_number(match[1]), _day_number(match[2])
    if start is None or end is None or start > 7 or end > 7:
        return term  # cronsim names the bad value
    step = f"/{match[3]}" if match[3] else ""
    if end == 0 and start > 0:
        return f"{start}-7{step}"  # `fri-sun`: Sunday as 7 closes the week
    if start <= end:
        return term
    days = [*range(start, 7), *range(end + 1)]
    return ",".join(str(day) for day in days[:: int(match[3] or 1)])


@functools.lru_cache(maxsize=4096)
def normalize(expr: str) -> str:
    """The cron as cronsim reads it: 5 lowercase fields, wrapping day ranges unwrapped.
    CronError names the field that is wrong and how to write it."""
    fields = expr.lower().split()
    if len(fields) != CRON_FIELDS:
        raise CronError(
            f"cron {expr!r} needs 5 fields (minute hour day month day-of-week)",
            key="cron_fields",
            params={"cron": expr},
        )
    for name, field in zip(FIELD_NAMES, fields, strict=True):
        if "?" in field:
            raise CronError(
                f"cron {expr!r}: '?' is not crontab; write '*' in the {name}",
                key="cron_question_mark",
                params={"cron": expr, "part": name},
            )
    fields[4] = ",".join(_unwrap(term) for term in fields[4].split(","))
    normal = " ".join(fields)
    for name, field in zip(FIELD_NAMES, fields, strict=True):
        probe = " ".join(field if n == name else "*" for n in FIELD_NAMES)
        try:
            CronSim(probe, datetime(2000, 1, 1))  # noqa: DTZ001 - only parses the fields
        except CronSimError:
            raise CronError(
                f"cron {expr!r}: bad {name} {field!r} (use {FIELD_HINTS[name]})",
                key="cron_bad_field",
                params={"cron": expr, "part": name, "value": field},
            ) from None
    return normal


def never_fires(expr: str) -> CronError:
    return CronError(
        f"cron {expr!r} never fires within a year: no date matches it (e.g. February has no"
        " day 30 or 31, and a 29th only once in four years)",
        key="cron_never_fires",
        params={"cron": expr},
    )


def is_fixed_time(expr: str) -> bool:
    """Whether the schedule follows the wall clock on DST days (its hour field has no leading
    `*`: `30 2 * * *`, `*/10 1-3 * * *`), as opposed to an interval schedule (`*/30 * * * *`,
    `0 */2 * * *`) that follows real time."""
    return not expr.split()[1].startswith("*")


def _walk(expr: str, zone: ZoneInfo, start: datetime, reverse: bool) -> Iterator[datetime]:
    """The fire times from `start` (exclusive, UTC), forward or back, in `zone`; none when no
    date matches (e.g. day 30 of February). cronsim matches the fields on a clock with no DST
    (naive, or a fixed offset); what a clock change does is decided here, not left to cronsim's
    own zone handling, which keeps Debian's rule that `* 2 * * *` skips the date of a spring
    gap and, in a half-hour DST zone (Australia/Lord_Howe), loses interval slots."""
    normal = normalize(expr)
    try:
        if is_fixed_time(normal):
            yield from _wall_walk(normal, zone, start, reverse)
        else:
            yield from _real_walk(normal, zone, start, reverse)
    except CronSimError:  # the fields parsed alone: together no month has the day
        return


def _wall_walk(expr: str, zone: ZoneInfo, start: datetime, reverse: bool) -> Iterator[datetime]:
    """On the wall clock: a repeated time is its first pass (fold 0), a time inside a spring
    gap is the first real instant after the gap; fires that land on one instant are one."""
    last: datetime | None = None
    for wall in CronSim(expr, start.astimezone(zone).replace(tzinfo=None), reverse=reverse):
        fire = wall.replace(tzinfo=zone)
        while fire.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != fire.replace(
            tzinfo=None
        ):  # inside a gap: the gap ends on a whole minute
            fire = (fire.replace(tzinfo=None) + _ONE_MINUTE).replace(tzinfo=zone)
        if last is None or fire.astimezone(UTC) != last.astimezone(UTC):
            yield fire
        last = fire


def _real_walk(expr: str, zone: ZoneInfo, start: datetime, reverse: bool) -> Iterator[datetime]:
    """In real time: between two clock changes the zone is a fixed offset, which cronsim walks
    without any DST; at a change the walk goes on from the change with the new offset."""
    cursor, way = start, -_ONE_SECOND if reverse else _ONE_SECOND
    while True:
        since = cursor + way  # the first instant the walk can answer
        offset = since.astimezone(zone).utcoffset() or _ZERO
        restart = None
        for fire in CronSim(expr, cursor.astimezone(timezone(offset)), reverse=reverse):
            restart = _change(zone, since, fire.astimezone(UTC))
            if restart is not None:
                break
            yield fire.astimezone(zone)
        if restart is None:
            return
        # `restart` is the first instant of the later offset: forward, go on from it with the
        # new offset; back, go on before it with the old one.
        cursor = restart if reverse else restart - _ONE_SECOND


def _change(zone: ZoneInfo, since: datetime, until: datetime) -> datetime | None:
    """The first instant of the next clock change from `since` towards `until` (either way in
    time, at most a year); None when the offset holds. Changes are months apart, so looking
    every CHANGE_PROBE finds any."""
    step = CHANGE_PROBE if until >= since else -CHANGE_PROBE
    was = since.astimezone(zone).utcoffset()
    probe = since
    while True:
        ahead = probe + step
        if (ahead >= until) if step > _ZERO else (ahead <= until):
            ahead = until
        if ahead.astimezone(zone).utcoffset() != was:
            early, late = sorted((probe, ahead))
            return _bisect(zone, early, late)
        if ahead == until:
            return None
        probe = ahead


def _bisect(zone: ZoneInfo, early: datetime, late: datetime) -> datetime:
    """The first instant (to the second) at which `late`'s offset holds."""
    then = late.astimezone(zone).utcoffset()
    while late - early > _ONE_SECOND:
        middle = early + (late - early) / 2
        middle = middle.replace(microsecond=0)
        if middle.astimezone(zone).utcoffset() == then:
            late = middle
        else:
            early = middle
    return late


def next_fire(expr: str, timezone: str, after: datetime) -> datetime:
    """The first fire time ≥ after. CronError if the expression is invalid or has no fire
    time within HORIZON: chat, config and check-config refuse such a schedule alike."""
    zone = ZoneInfo(timezone)
    # Compared in UTC: two times of one zone compare by their wall clocks, fold ignored.
    after = after.astimezone(UTC)
    # cronsim answers times after its start, on the wall clock for a fixed-time schedule: a
    # start in a repeated hour may answer the first pass, before `after`; those are skipped.
    start = after.replace(microsecond=0) - _ONE_SECOND
    for fire in _walk(expr, zone, start, reverse=False):
        if fire > after + HORIZON:
            break
        if fire >= after:
            return fire
    raise never_fires(expr)


def previous_fire(
    expr: str, timezone: str, now: datetime, horizon_days: int = 8
) -> datetime | None:
    """The latest fire time ≤ now within the horizon (for catch-up after downtime); None
    when there is none. A few steps of cronsim whatever the schedule's frequency.

    A fixed-time schedule is walked on the wall clock, where the second pass of a repeated
    hour is *earlier* than the first pass's fire (01:10 EST comes after 01:30 EDT): just after
    a clock change the walk starts DST_SLACK later and skips what is after `now`."""
    zone = ZoneInfo(timezone)
    now = now.astimezone(UTC)  # compared in UTC, as in next_fire
    start = now.replace(microsecond=0) + _ONE_SECOND
    if _offset_changed(now.astimezone(zone), DST_SLACK):
        start += DST_SLACK
    oldest = now - timedelta(days=horizon_days)
    for fire in _walk(expr, zone, start, reverse=True):
        if fire < oldest:
            return None
        if fire <= now:
            return fire
    return None


def _offset_changed(moment: datetime, span: timedelta) -> bool:
    before = (moment - span).astimezone(moment.tzinfo)
    return before.utcoffset() != moment.utcoffset()


def next_real_fire(
    expr: str, timezone: str, after: datetime, calendar: WorkingCalendar | None
) -> WorkingFire | None:
    """The first fire time ≥ after that falls on the calendar's working time (holidays, days
    off and quiet hours skipped), with the holidays it skipped; None when no fire within a year
    is on working time. A work-week cron fires on the calendar's make-up working days too
    (`_work_week`). CronError as next_fire."""
    if calendar is None or calendar.always:
        return WorkingFire(next_fire(expr, timezone, after))
    daily, holidays = _every_day(expr), calendar.holidays
    if daily is None or holidays is None:
        return next_working_fire(calendar, expr, timezone, after, next_fire)

    def on_work_week(_: str, zone: str, cursor: datetime) -> datetime:
        while not _work_week(fire := next_fire(daily, zone, cursor), zone, holidays):
            cursor = fire.astimezone(UTC) + _ONE_SECOND
        return fire

    return next_working_fire(calendar, expr, timezone, after, on_work_week)


def previous_real_fire(
    expr: str, timezone: str, now: datetime, horizon_days: int, holidays: HolidaySource | None
) -> datetime | None:
    """previous_fire, where a work-week cron also fired on the make-up working days of
    `holidays` (the destination calendar's)."""
    daily = _every_day(expr)
    if daily is None or holidays is None:
        return previous_fire(expr, timezone, now, horizon_days)
    oldest, cursor = now.astimezone(UTC) - timedelta(days=horizon_days), now
    while (fire := previous_fire(daily, timezone, cursor, horizon_days)) is not None:
        if fire < oldest:
            return None
        if _work_week(fire, timezone, holidays):
            return fire
        cursor = fire.astimezone(UTC) - _ONE_SECOND
    return None


WORK_WEEK: Final = frozenset({"mon-fri", "1-5"})  # the days of `workdays HH:MM`


def _every_day(expr: str) -> str | None:
    """A cron of the work week (`30 9 * * mon-fri`: what `workdays 09:30` means) as the same
    cron on every day; None for any other cron. Its fires are the work week's days plus the
    make-up working days (China's 调休 weekends) that the calendar's holidays name: one rule,
    the calendar's, says what a working day is, for `workdays 09:30` as for `daily 09:30`."""
    fields = expr.lower().split()
    if len(fields) == CRON_FIELDS and fields[2] == "*" and fields[4] in WORK_WEEK:
        return " ".join([*fields[:4], "*"])
    return None


def _work_week(fire: datetime, timezone: str, holidays: HolidaySource) -> bool:
    day = fire.astimezone(ZoneInfo(timezone)).date()
    return day.weekday() < len(WORK_WEEK_DAYS) or holidays.makeup_workday(day)


WORK_WEEK_DAYS: Final = ("mon", "tue", "wed", "thu", "fri")


SYNTHESIS_GAP: Final = timedelta(days=1, hours=2)  # a day, and room for a DST change
SYNTHESIS_FIRES: Final = 7  # the shortest gap among this many coming fires is the cadence


@functools.lru_cache(maxsize=4096)
def cadence_over_a_day(schedule: str, timezone: str, start: datetime) -> bool:
    """Whether the cron's shortest gap between fires (after `start`) is longer than a day: a
    weekly cadence, whose digest opens with the weekly synthesis."""
    gaps = []
    moment = start.astimezone(UTC)  # in UTC: arithmetic in one zone ignores a DST change
    try:
        for _ in range(SYNTHESIS_FIRES + 1):
            following = next_fire(schedule, timezone, moment + _ONE_SECOND).astimezone(UTC)
            gaps.append(following - moment)
            moment = following
    except CronError:
        return False
    return min(gaps[1:]) > SYNTHESIS_GAP
