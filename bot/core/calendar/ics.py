"""Holidays from an iCalendar (RFC 5545) file: its all-day VEVENTs, read by hand.

What is read: `DTSTART` (a date, `DTSTART;VALUE=DATE:20261001`; a date-time counts as its
date), `DTEND` (exclusive; one day when absent), `SUMMARY` (the holiday's name) and
`RRULE:FREQ=YEARLY` (the same dates every year; `INTERVAL=1` may be said). Folded lines are
joined. Anything else in a VEVENT is ignored; an RRULE other than a plain yearly one is refused,
since a holiday read wrongly would silence a destination on the wrong day.

A holiday calendar is a few KB and a few hundred events; the file is read whole at start, and
each year's holidays are worked out from every event, so a file past MAX_ICS_BYTES, or past
MAX_EVENTS events or MAX_HOLIDAY_DAYS days in all, is refused rather than read for a minute.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

MAX_EVENT_DAYS = 366  # one event longer than a year is a mistake, not a holiday
MAX_ICS_BYTES = 2 * 1024 * 1024
MAX_EVENTS = 5_000
MAX_HOLIDAY_DAYS = 20_000  # the days all its events span (a yearly one counted once)
_DATE = re.compile(r"^(\d{4})(\d{2})(\d{2})(T\d{6}Z?)?$")
_YEARLY = frozenset({"FREQ=YEARLY", "INTERVAL=1"})


class IcsError(ValueError):
    """The file is not an iCalendar file this reader understands; the message says where."""


@dataclass(frozen=True, slots=True)
class IcsEvent:
    start: date
    end: date  # exclusive
    name: str
    yearly: bool = False

    def days_from(self, year: int) -> list[date]:
        """The days of its occurrence that starts in `year` (a yearly event moved to that
        year; none when it does not occur then). They may run into the next year."""
        first = self.start
        if self.yearly and year >= self.start.year:
            try:
                first = self.start.replace(year=year)
            except ValueError:  # 29 February outside a leap year
                return []
        elif first.year != year:
            return []
        return [first + timedelta(days=n) for n in range((self.end - self.start).days)]


def _unfolded(text: str) -> list[tuple[int, str]]:
    """(line number, logical line): a line starting with a space or tab continues the last."""
    lines: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if raw[:1] in (" ", "\t") and lines:
            lines[-1] = (lines[-1][0], lines[-1][1] + raw[1:])
        elif raw.strip():
            lines.append((number, raw.rstrip()))
    return lines


def _date(value: str, number: int) -> date:
    match = _DATE.match(value.strip())
    if match is None:
        raise IcsError(f"line {number}: {value!r} is not a date (YYYYMMDD)")
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        raise IcsError(f"line {number}: {value!r} is not a date (YYYYMMDD)") from None


def _event(props: dict[str, tuple[int, str]], begun: int) -> IcsEvent:
    if "DTSTART" not in props:
        raise IcsError(f"line {begun}: a VEVENT without DTSTART")
    start = _date(props["DTSTART"][1], props["DTSTART"][0])
    end = start + timedelta(days=1)
    if "DTEND" in props:
        number, value = props["DTEND"]
        end = _date(value, number)
        if not start < end or (end - start).days > MAX_EVENT_DAYS:
            raise IcsError(f"line {number}: DTEND must be 1 to {MAX_EVENT_DAYS} days after DTSTART")
    yearly = False
    if "RRULE" in props:
        number, rule = props["RRULE"]
        if set(rule.upper().split(";")) - _YEARLY or "FREQ=YEARLY" not in rule.upper():
            raise IcsError(f"line {number}: only RRULE:FREQ=YEARLY is read, not {rule!r}")
        yearly = True
    name = props.get("SUMMARY", (0, "holiday"))[1].replace("\\,", ",").strip() or "holiday"
    return IcsEvent(start, end, name, yearly)


def _check_size(events: int, days: int, number: int) -> None:
    if events > MAX_EVENTS:
        why = f"more than {MAX_EVENTS} events (a holiday calendar has a few hundred)"
        raise IcsError(f"line {number}: {why}")
    if days > MAX_HOLIDAY_DAYS:
        raise IcsError(f"line {number}: its events span more than {MAX_HOLIDAY_DAYS} days")


def parse_ics(text: str) -> tuple[IcsEvent, ...]:
    """The all-day events of an iCalendar text; IcsError names the line of what is wrong."""
    lines = _unfolded(text)
    if not lines or lines[0][1].upper() != "BEGIN:VCALENDAR":
        raise IcsError("line 1: an iCalendar file starts with BEGIN:VCALENDAR")
    events: list[IcsEvent] = []
    props: dict[str, tuple[int, str]] | None = None
    begun = days = 0
    for number, line in lines:
        head, sep, value = line.partition(":")
        name = head.split(";", 1)[0].upper()
        if not sep:
            raise IcsError(f"line {number}: {line[:40]!r} is not NAME:VALUE")
        if name == "BEGIN" and value.upper() == "VEVENT":
            props, begun = {}, number
        elif name == "END" and value.upper() == "VEVENT":
            if props is None:
                raise IcsError(f"line {number}: END:VEVENT without BEGIN:VEVENT")
            events.append(event := _event(props, begun))
            days += (event.end - event.start).days
            _check_size(len(events), days, begun)
            props = None
        elif props is not None:
            props.setdefault(name, (number, value))
    if props is not None:
        raise IcsError(f"line {begun}: a VEVENT that never ends (no END:VEVENT)")
    if not events:
        raise IcsError("no VEVENT in the file: it names no holiday")
    return tuple(events)
