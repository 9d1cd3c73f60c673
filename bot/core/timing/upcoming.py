"""A cadence's coming fire times, each with why it is where it is (`prdigest cadence test`).

Each fire is one the scheduler would send: the cron's fire times (cron.py) on the working time
of a calendar when one is given, so a fire held by a holiday, a day off or quiet hours
moves to the next fire on working time. A note says what moved it, and what a DST change did:
a time inside a spring gap fired at the first instant after it, a repeated hour (fixed times
fire once, at the first pass; interval schedules at both), the clocks changed since the last
fire.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final
from zoneinfo import ZoneInfo

from cronsim import CronSim

from bot.core.calendar import Block, BlockKind, WorkingCalendar
from bot.core.timing.cron import is_fixed_time, next_fire, next_real_fire, normalize
from bot.core.timing.working import WorkingFire

MAX_COUNT: Final = 1000  # fires one listing may ask for
_SECOND: Final = timedelta(seconds=1)
ZERO: Final = timedelta(0)


@dataclass(frozen=True, slots=True)
class Fire:
    at: datetime  # in the cadence's zone
    notes: tuple[str, ...] = ()

    @property
    def local(self) -> str:
        """`Sun 2026-03-08 03:00 EDT`."""
        return f"{self.at:%a %Y-%m-%d %H:%M} {self.at.tzname()}"

    @property
    def note(self) -> str:
        return "; ".join(self.notes)


def fires(
    cron: str, tz: str, start: datetime, count: int, calendar: WorkingCalendar | None = None
) -> Iterator[Fire]:
    """Up to `count` fires ≥ start (fewer when none is on working time within a year).
    CronError if the cron is invalid or never fires."""
    zone, cursor, last = ZoneInfo(tz), start.astimezone(UTC), None
    for _ in range(min(count, MAX_COUNT)):
        raw = next_fire(cron, tz, cursor)
        found = next_real_fire(cron, tz, cursor, calendar)
        if found is None:
            return
        at = found.at.astimezone(zone)
        moved = found.at.timestamp() != raw.timestamp()
        held = calendar.block(raw) if calendar is not None and moved else None
        notes = [*_calendar_notes(held, raw.astimezone(zone), at, found, calendar)]
        notes += _dst_notes(cron, at, last)
        yield Fire(at, tuple(notes))
        last, cursor = at, at.astimezone(UTC) + _SECOND


def _calendar_notes(
    held: Block | None,
    raw: datetime,
    at: datetime,
    found: WorkingFire,
    calendar: WorkingCalendar | None,
) -> Iterator[str]:
    if found.holidays:
        yield found.note.strip("()")
    if held is None or calendar is None or held.kind is BlockKind.HOLIDAY:
        return
    to = f"{at:%H:%M}" if at.date() == raw.date() else f"{at:%Y-%m-%d %H:%M}"
    if held.kind is BlockKind.QUIET and held.until is not None:  # a timed calendar event
        yield f"inside the event {held.name or '(no summary)'!r} from {raw:%H:%M}, held to {to}"
    elif held.kind is BlockKind.QUIET and calendar.quiet is not None:
        yield f"inside quiet hours {calendar.quiet.text} from {raw:%H:%M}, held to {to}"
    else:
        yield f"{raw:%a %Y-%m-%d} is a day off, held to {to}"


def _dst_notes(cron: str, at: datetime, last: datetime | None) -> Iterator[str]:
    fixed = is_fixed_time(cron)
    before = (at.astimezone(UTC) - _SECOND).astimezone(at.tzinfo)  # real time, not wall
    other = at.replace(fold=1 - at.fold)
    if fixed and before.utcoffset() != at.utcoffset() and not _matches(cron, at):
        yield (
            f"DST: {at:%Y-%m-%d} skips {before + _SECOND:%H:%M}-{at:%H:%M} ({before.tzname()}"
            f" → {at.tzname()}); the time set inside the gap fires at {at:%H:%M}, the first"
            " instant after it"
        )
    elif other.utcoffset() != at.utcoffset():
        if fixed:
            yield (
                f"DST: {at:%H:%M} comes twice on {at:%Y-%m-%d} (clocks go back); a fixed time"
                f" fires once, at the first ({at.tzname()})"
            )
        else:
            nth = "first" if at.fold == 0 else "second"
            yield f"DST: the {nth} pass of the repeated hour ({at.tzname()})"
    elif last is not None and last.utcoffset() != at.utcoffset():
        way = "forward" if (at.utcoffset() or ZERO) > (last.utcoffset() or ZERO) else "back"
        yield f"DST: the clocks went {way} since the last fire ({last.tzname()} → {at.tzname()})"


def _matches(cron: str, at: datetime) -> bool:
    """Whether the cron names `at`'s wall-clock time (a fire moved out of a spring gap does
    not)."""
    wall = at.replace(tzinfo=None)
    return next(CronSim(normalize(cron), wall - _SECOND), None) == wall
