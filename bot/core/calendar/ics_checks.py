"""What makes an iCalendar file unusable, found before its events are expanded, each problem
with the line it is on: the outline of its BEGIN/END blocks, and each VEVENT's properties as
`icalendar` read them (a date that is not one, an unknown TZID, an end before the start, an
RRULE that would take too long to expand).

A problem is (where it was found, message); the first in the file is the one reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # only its type: icalendar is imported when a file is read (ics.py)
    from icalendar import Component

MAX_EVENT_DAYS: Final = 366  # one event longer than a year is a mistake, not a holiday
MAX_EVENTS: Final = 5_000  # VEVENTs in a file, and occurrences in a year once RRULEs repeat them
MAX_HOLIDAY_DAYS: Final = 20_000  # days the VEVENTs span (each once), and a year's occurrences
# The steps all RRULEs take from DTSTART to the end of the years checked, a step the time
# dateutil takes for a day (about 2.5 µs): 300 yearly holidays since 2000 take 290,000.
MAX_RULE_STEPS: Final = 1_000_000
_DATED: Final = frozenset({"DTSTART", "DTEND", "RECURRENCE-ID", "EXDATE", "RDATE"})
_READ: Final = _DATED | {"DURATION", "RRULE"}
_PERIOD: Final = {
    "SECONDLY": timedelta(seconds=1),
    "MINUTELY": timedelta(minutes=1),
    "HOURLY": timedelta(hours=1),
    "DAILY": timedelta(days=1),
    "WEEKLY": timedelta(days=7),
    "MONTHLY": timedelta(days=28),  # the shortest month: an upper bound of the steps
    "YEARLY": timedelta(days=365),
}
_COST: Final = {"YEARLY": 32, "MONTHLY": 26, "WEEKLY": 2}  # dateutil's time for a period, in days
Problem = tuple[int, str]


class IcsError(ValueError):
    """The file is not an iCalendar file this reader can use; the message says where."""


@dataclass
class EventLines:
    """Where a VEVENT is in the text: its BEGIN line, and each of its own properties' first line
    and written value (a VALARM's inside it are not its own)."""

    begun: int
    props: dict[str, tuple[int, str]] = field(default_factory=dict)

    def line(self, prop: str) -> int:
        return self.props.get(prop, (self.begun, ""))[0]

    def raw(self, prop: str) -> str:
        return self.props.get(prop, (0, ""))[1]


@dataclass
class Outline:
    events: list[EventLines]
    problems: list[Problem]
    closing: str  # the END lines of blocks left open, so icalendar reads what came before


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(line number, content line) with folded lines joined. Only LF and CRLF end a line: a
    U+2028 inside a value is text, as RFC 5545 says."""
    lines: list[tuple[int, str]] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        raw = raw.removesuffix("\r")
        if raw[:1] in (" ", "\t") and lines:
            lines[-1] = (lines[-1][0], lines[-1][1] + raw[1:])
        elif raw.strip():
            lines.append((number, raw))
    return lines


def outline(text: str) -> Outline:
    """The VEVENTs' lines and the problems of the block structure. IcsError at once for a file
    that does not start with BEGIN:VCALENDAR or holds more than MAX_EVENTS VEVENTs."""
    lines = logical_lines(text)
    if not lines or lines[0][1].strip().upper() != "BEGIN:VCALENDAR":
        raise IcsError(
            f"line {lines[0][0] if lines else 1}: an iCalendar file starts with BEGIN:VCALENDAR"
        )
    found = Outline([], [], "")
    stack: list[tuple[str, int]] = []
    for number, line in lines:
        head, sep, value = line.partition(":")
        name, kind = head.split(";", 1)[0].strip().upper(), value.strip().upper()
        if not sep:
            found.problems.append((number, f"line {number}: {line[:40]!r} is not NAME:VALUE"))
        elif name == "BEGIN":
            _begin(found, stack, kind, number)
        elif name == "END":
            _end(found, stack, kind, number)
        elif len(stack) == 2 and stack[-1][0] == "VEVENT":
            found.events[-1].props.setdefault(name, (number, value))
    end = lines[-1][0] + 1
    for kind, begun in reversed(stack):
        found.problems.append((end, f"line {begun}: a {kind} that never ends (no END:{kind})"))
    found.closing = "".join(f"\r\nEND:{kind}" for kind, _ in reversed(stack)) + "\r\n"
    return found


def _begin(found: Outline, stack: list[tuple[str, int]], kind: str, number: int) -> None:
    if not stack and kind != "VCALENDAR":
        found.problems.append((number, f"line {number}: BEGIN:{kind} outside BEGIN:VCALENDAR"))
    stack.append((kind, number))
    if kind == "VEVENT" and len(stack) == 2:
        if len(found.events) == MAX_EVENTS:
            why = f"more than {MAX_EVENTS} events (a holiday calendar has a few hundred)"
            raise IcsError(f"line {number}: {why}")
        found.events.append(EventLines(number))


def _end(found: Outline, stack: list[tuple[str, int]], kind: str, number: int) -> None:
    if not stack or stack[-1][0] != kind:
        open_now = f" (BEGIN:{stack[-1][0]} of line {stack[-1][1]} is open)" if stack else ""
        found.problems.append((number, f"line {number}: END:{kind} without BEGIN:{kind}{open_now}"))
    else:
        stack.pop()


def where(event: Component) -> str:
    uid = event.get("UID")
    return f" (UID {str(uid)!r})" if uid is not None else ""


def event_problems(lines: EventLines, event: Component) -> list[Problem]:
    """What is wrong with one VEVENT as `icalendar` read it; [] when nothing is."""
    uid = where(event)
    for prop, message in event.errors:
        if prop is None or prop.upper() in _READ:
            return [_value_problem(lines, prop, message, uid)]
    if "DTSTART" not in event:
        return [(lines.begun, f"line {lines.begun}: a VEVENT without DTSTART{uid}")]
    for prop in ("DTSTART", "DTEND"):
        tzid = _prop(event, prop).params.get("TZID") if prop in event else None
        if tzid is not None and getattr(_prop(event, prop).dt, "tzinfo", None) is None:
            line = lines.line(prop)
            return [(line, f"line {line}: TZID {tzid!r} is not a time zone (an IANA name, or one"
                           f" a VTIMEZONE of the file defines){uid}")]  # fmt: skip
    return _length_problems(lines, event, uid)


def _value_problem(lines: EventLines, prop: str | None, message: str, uid: str) -> Problem:
    if prop is None:
        return (lines.begun, f"line {lines.begun}: {message}{uid}")
    name = prop.upper()
    line, raw = lines.line(name), lines.raw(name)
    if name in _DATED:
        return (line, f"line {line}: {raw!r} is not a date (YYYYMMDD) or a date-time"
                      f" (YYYYMMDDTHHMMSS){uid}")  # fmt: skip
    return (line, f"line {line}: {name} {raw!r}: {message}{uid}")


def event_span(event: Component) -> tuple[date, date]:
    """(start, end) of the VEVENT's first occurrence: DTEND, else DTSTART + DURATION, else
    one day for a date and no time at all for a date-time (RFC 5545 §3.6.1)."""
    start: date = _prop(event, "DTSTART").dt
    if "DTEND" in event:
        end: date = _prop(event, "DTEND").dt
        return start, end
    if "DURATION" in event:
        return start, start + _prop(event, "DURATION").dt
    return start, start if isinstance(start, datetime) else start + timedelta(days=1)


def _prop(event: Component, name: str) -> Any:
    """A property as icalendar decoded it (its `.dt`, its `.params`): the one type its stubs
    give every property, which names no `.dt`."""
    return event[name]


def _length_problems(lines: EventLines, event: Component, uid: str) -> list[Problem]:
    start, end = event_span(event)
    prop = "DTEND" if "DTEND" in event else "DURATION"
    line = lines.line(prop)
    after = "be after DTSTART, by" if prop == "DTEND" else "be more than nothing and"
    why = f"line {line}: {prop} must {after} at most {MAX_EVENT_DAYS} days{uid}"
    if isinstance(start, datetime) != isinstance(end, datetime):
        return [(line, f"line {line}: {prop} and DTSTART must both be dates or date-times{uid}")]
    try:
        late = end - start
        early = end < start if isinstance(start, datetime) else end <= start
    except TypeError:  # one with a zone, one floating
        return [(line, f"line {line}: {prop} and DTSTART must both have a zone or neither{uid}")]
    if early or late > timedelta(days=MAX_EVENT_DAYS):
        return [(line, why)]
    return []


def span_days(start: date, end: date) -> int:
    """The days an occurrence covers (a part of a day counts as one)."""
    if isinstance(start, datetime) and isinstance(end, datetime):
        if end <= start:
            return 0
        return (end - start).days + (1 if (end - start) % timedelta(days=1) else 0) + 1
    return (end - start).days


def rule_steps(event: Component, window: tuple[datetime, datetime]) -> tuple[int, int]:
    """(steps, repeats) of the VEVENT's RRULEs: the steps dateutil takes to expand them up to
    the window's end (it walks every period from DTSTART, whatever the span asked for; a
    YEARLY or MONTHLY period costs it some 30 times a daily one), and about how many
    occurrences they give inside the window (a period times the times of day BYHOUR, BYMINUTE
    and BYSECOND make of it)."""
    rules: Any = event.get("RRULE")
    if rules is None:
        return 0, 0
    start = _naive(_prop(event, "DTSTART").dt)
    steps = repeats = 0
    for rule in rules if isinstance(rules, list) else [rules]:
        freq = str(rule.get("FREQ", ["YEARLY"])[0]).upper()
        period = _PERIOD.get(freq, _PERIOD["YEARLY"]) * max(1, int(rule.get("INTERVAL", [1])[0]))
        stop = min([window[1], *(_naive(until) for until in rule.get("UNTIL", []))])
        periods = max(0, math.ceil((stop - start) / period)) + 1
        inside = max(0, math.ceil((stop - max(start, window[0])) / period)) + 1
        if "COUNT" in rule and not any(key.startswith("BY") for key in rule):
            periods, inside = (
                min(periods, int(rule["COUNT"][0])),
                min(inside, int(rule["COUNT"][0])),
            )
        factor = math.prod(
            len(rule.get(key, [])) or 1 for key in ("BYHOUR", "BYMINUTE", "BYSECOND")
        )
        steps += periods * factor * _COST.get(freq, 1)
        repeats += inside * factor
    return steps, repeats


def _naive(moment: date) -> datetime:
    if isinstance(moment, datetime):
        return moment.replace(tzinfo=None)
    return datetime(moment.year, moment.month, moment.day)  # noqa: DTZ001  # a wall time, to compare
