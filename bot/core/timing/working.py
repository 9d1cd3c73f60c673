"""A subscription's next *real* fire time: its cron's next fire that falls on working time.

The cron engine comes in as a function (`NextFire`: `cron.next_fire`), as in cadence.py.
A fire that is not working time is skipped by jumping to the calendar's next working moment
and asking the cron again from there, so a week of holidays costs a few calls, whatever the
cron's frequency.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Final
from zoneinfo import ZoneInfo

from bot.core.calendar.model import Block, BlockKind, WorkingCalendar
from bot.core.timing.horizon import HORIZON, NextFire

NAMES_SHOWN: Final = 2


@dataclass(frozen=True, slots=True)
class WorkingFire:
    at: datetime
    holidays: tuple[Block, ...] = ()  # the holidays skipped on the way, in order

    @property
    def note(self) -> str:
        """`(after the 2026-10-01 holiday: National Day)`, or for several days
        `(after the holidays 2026-10-01 to 2026-10-07: National Day, ...)`; "" if none."""
        if not self.holidays:
            return ""
        first, last = self.holidays[0], self.holidays[-1]
        names = list(dict.fromkeys(block.name for block in self.holidays))
        shown = ", ".join(names[:NAMES_SHOWN]) + (", ..." if len(names) > NAMES_SHOWN else "")
        if first.day == last.day:
            return f"(after the {first.day.isoformat()} holiday: {shown})"
        return f"(after the holidays {first.day.isoformat()} to {last.day.isoformat()}: {shown})"


def next_working_fire(
    calendar: WorkingCalendar, cron: str, tz: str, after: datetime, fires: NextFire
) -> WorkingFire | None:
    """The first fire ≥ `after` on working time; None when none falls on working time within
    a year (e.g. `weekly sat` with mon-fri workdays). ValueError from `fires` passes through
    (an invalid cron, or one that never fires)."""
    skipped: list[Block] = []
    cursor = after
    while cursor < after + HORIZON:
        fire = fires(cron, tz, cursor)
        block = calendar.block(fire)
        if block is None:
            return WorkingFire(fire, tuple(skipped))
        resume = calendar.next_working(fire)
        if resume is None:
            return None
        skipped += _holidays_between(calendar, block.day, resume, skipped)
        cursor = resume
    return None


def _holidays_between(
    calendar: WorkingCalendar, first: date, resume: datetime, known: list[Block]
) -> list[Block]:
    """The holidays from `first` up to the day of `resume` (the stretch jumped over)."""
    last = resume.astimezone(ZoneInfo(calendar.zone)).date()
    found = []
    day = first
    while day <= last:
        block = calendar.day_block(day)
        fresh = not known or known[-1].day < day
        if block is not None and block.kind is BlockKind.HOLIDAY and fresh:
            found.append(block)
        day += timedelta(days=1)
    return found
