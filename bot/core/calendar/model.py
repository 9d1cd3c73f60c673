"""A destination's working calendar: its zone, workdays, quiet hours and holidays.

A moment is *working* when, in the calendar's zone, its day is a workday (or a make-up working
day of its country) that is not a holiday, and its time is outside the quiet hours and outside
the timed events of its ICS file (each a quiet interval, `Block.until` its end). Nothing is
sent at a moment that is not working (the scheduler's rule, bot/scheduling/tick.py).
Quiet hours `22:00-08:00` hold from 22:00 up to, not including, 08:00, across midnight; a range
whose start is before its end (`12:00-13:00`) stays within a day.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from enum import StrEnum
from typing import Final
from zoneinfo import ZoneInfo

from bot.core.calendar.holidays import CalendarError, HolidaySource, IcsHolidays

WEEKDAYS: Final = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
EVERY_DAY: Final = frozenset(range(7))
# How far any fire-time search looks ahead (next_working here, the cron and the working fire in
# core/timing): a schedule must fire within a year, and a year of days off is no working time.
MAX_DAYS_AHEAD = 366
_RANGE = re.compile(r"^\s*([01]?\d|2[0-3]):([0-5]\d)\s*-\s*([01]?\d|2[0-3]):([0-5]\d)\s*$")


def parse_workdays(names: list[str] | tuple[str, ...]) -> frozenset[int]:
    """`[mon, tue]` → {0, 1}; ranges (`mon-fri`, `fri-mon` across the week's end) and full
    names (`monday`) too. CalendarError names a bad day."""
    days: set[int] = set()
    for name in names:
        first, _, last = str(name).strip().lower().partition("-")
        start, end = _day_number(first, name), _day_number(last or first, name)
        days.update(range(start, end + 1) if start <= end else (*range(start, 7), *range(end + 1)))
    if not days:
        raise CalendarError("no workday: name at least one day (e.g. [mon, tue, wed, thu, fri])")
    return frozenset(days)


_FULL_NAMES: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_NUMBERS: Final = {
    **{short: n for n, short in enumerate(WEEKDAYS)},
    **{full: n for n, full in enumerate(_FULL_NAMES)},
}


def _day_number(word: str, written: object) -> int:
    number = _DAY_NUMBERS.get(word.strip())
    if number is None:
        raise CalendarError(f"unknown day {written!r} (use {', '.join(WEEKDAYS)})")
    return number


def days_text(days: frozenset[int]) -> str:
    """{0..4} → `mon-fri`; {0, 2} → `mon,wed`."""
    if days == EVERY_DAY:
        return "every day"
    runs: list[str] = []
    for day in sorted(days):
        if runs and day - 1 in days and runs[-1].split("-")[-1] == WEEKDAYS[day - 1]:
            runs[-1] = f"{runs[-1].split('-')[0]}-{WEEKDAYS[day]}"
        else:
            runs.append(WEEKDAYS[day])
    return ",".join(runs)


@dataclass(frozen=True, slots=True)
class QuietHours:
    start: time
    end: time

    @classmethod
    def parse(cls, text: str) -> QuietHours:
        match = _RANGE.match(text)
        if match is None:
            raise CalendarError(f"{text!r} is not a range of times (use HH:MM-HH:MM, 22:00-08:00)")
        start, end = time(int(match[1]), int(match[2])), time(int(match[3]), int(match[4]))
        if start == end:
            raise CalendarError(f"{text!r} starts and ends at the same time (it would be all day)")
        return cls(start, end)

    @property
    def text(self) -> str:
        return f"{self.start:%H:%M}-{self.end:%H:%M}"

    def contains(self, moment: time) -> bool:
        if self.start < self.end:
            return self.start <= moment < self.end
        return moment >= self.start or moment < self.end


class BlockKind(StrEnum):
    HOLIDAY = "holiday"
    DAY_OFF = "day off"
    QUIET = "quiet hours"


@dataclass(frozen=True, slots=True)
class Block:
    """Why a moment is not working time."""

    kind: BlockKind
    day: date  # in the calendar's zone
    name: str = ""  # the holiday's name, or the timed event's
    until: datetime | None = None  # a timed event's end: the block holds up to it


@dataclass(frozen=True, slots=True)
class WorkingCalendar:
    zone: str
    workdays: frozenset[int] = EVERY_DAY
    quiet: QuietHours | None = None
    holidays: HolidaySource | None = None
    # An urgent subscription's view (`urgent: true`): no quiet time holds it, neither the
    # quiet hours nor the ICS file's timed events; holidays and days off still do.
    urgent: bool = False

    @property
    def always(self) -> bool:
        """Every moment is working time (no calendar configured: today's behaviour)."""
        return self.workdays == EVERY_DAY and self.quiet is None and self.holidays is None

    def for_route(self, urgent: bool, holidays: bool) -> WorkingCalendar:
        """This calendar as one subscription keeps it: `urgent` drops its quiet time, and
        `holidays=False` its holiday calendar (the holidays, make-up working days and timed
        events of its country or ICS file)."""
        if not urgent and holidays:
            return self
        return replace(
            self,
            quiet=None if urgent else self.quiet,
            holidays=self.holidays if holidays else None,
            urgent=urgent,
        )

    def day_block(self, day: date) -> Block | None:
        if self.holidays is not None:
            name = self.holidays.holiday(day)
            if name is not None:
                return Block(BlockKind.HOLIDAY, day, name)
        if day.weekday() not in self.workdays and not (
            self.holidays is not None and self.holidays.makeup_workday(day)
        ):
            return Block(BlockKind.DAY_OFF, day)
        return None

    def block(self, moment: datetime) -> Block | None:
        """Why `moment` is not working time; None when it is."""
        if self.always:
            return None
        local = moment.astimezone(ZoneInfo(self.zone))
        found = self.day_block(local.date())
        if found is None and self.holidays is not None and not self.urgent:
            event = self.holidays.timed_event(moment, self.zone)
            if event is not None:
                found = Block(BlockKind.QUIET, local.date(), event.name, until=event.end)
        if found is None and self.quiet is not None and self.quiet.contains(local.time()):
            found = Block(BlockKind.QUIET, local.date())
        return found

    def is_working(self, moment: datetime) -> bool:
        return self.block(moment) is None

    def next_working(self, moment: datetime) -> datetime | None:
        """The first working moment ≥ `moment`, None if there is none within MAX_DAYS_AHEAD
        (a calendar whose every day is a holiday)."""
        zone = ZoneInfo(self.zone)
        limit = moment + timedelta(days=MAX_DAYS_AHEAD)
        cursor = moment
        while cursor < limit:
            found = self.block(cursor)
            if found is None:
                return cursor
            local = cursor.astimezone(zone)
            if found.until is not None:
                cursor = found.until
            elif found.kind is BlockKind.QUIET and self.quiet is not None:
                end_day = local.date()
                if self.quiet.start > self.quiet.end and local.time() >= self.quiet.start:
                    end_day += timedelta(days=1)
                cursor = datetime.combine(end_day, self.quiet.end, tzinfo=zone)
            else:
                cursor = datetime.combine(local.date() + timedelta(days=1), time(), tzinfo=zone)
        return None

    def describe(self) -> str:
        """`mon-fri, quiet 22:00-08:00, holidays CN, Asia/Shanghai`."""
        parts = [days_text(self.workdays)]
        if self.quiet is not None:
            parts.append(f"quiet {self.quiet.text}")
        if self.holidays is not None:
            parts.append(f"holidays {self.holidays.label}")
        return ", ".join([*parts, self.zone])

    def route_text(self, urgent: bool, holidays: bool) -> str:
        """What a subscription's switches do to this, its destination's calendar:
        `urgent (ignores quiet hours 22:00-08:00; holidays CN apply)`; "" with neither."""
        if not urgent and holidays:
            return ""
        quiet = [] if self.quiet is None else [f"quiet hours {self.quiet.text}"]
        if isinstance(self.holidays, IcsHolidays) and holidays:
            quiet.append("the ICS file's timed events")  # quiet time too: urgent drops them
        days = [] if self.holidays is None else [f"holidays {self.holidays.label}"]
        ignored = (quiet if urgent else []) + ([] if holidays else days)
        kept = ([] if urgent else quiet) + (days if holidays else [])
        dropped = [what for what, on in (("quiet hours", urgent), ("holidays", not holidays)) if on]
        parts = [
            f"ignores {' and '.join(ignored)}"
            if ignored
            else f"no {' or '.join(dropped)} to ignore"
        ]
        if kept:
            parts.append(" and ".join(kept) + " apply")
        switches = [
            word for word, on in (("urgent", urgent), ("holidays: false", not holidays)) if on
        ]
        return f"{', '.join(switches)} ({'; '.join(parts)})"
