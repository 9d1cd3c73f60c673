"""Days off and quiet intervals from an iCalendar (RFC 5545) file, read with `icalendar` and
its repeats expanded with `recurring_ical_events` (RRULE with COUNT or UNTIL, RDATE, EXDATE,
an occurrence moved or cancelled by RECURRENCE-ID, DTEND or DURATION, TZID zones).

An all-day event (`DTSTART;VALUE=DATE`), one day or several, makes its days days off; a timed
event is a quiet interval from its start to its end, in its own zone (`TZID=`, or UTC with
`Z`); a floating time (neither) is in the calendar's zone.

A holiday calendar is a few KB and a few hundred events, read whole at start. A file past
MAX_ICS_BYTES, past MAX_EVENTS VEVENTs or MAX_HOLIDAY_DAYS days, or whose RRULEs would take more
than MAX_RULE_STEPS steps to expand or repeat more than MAX_EVENTS times a year, is refused with
the line of what is wrong; so is one that, expanded over the years around `today` (the year
before it to two years after), gives more than MAX_EVENTS occurrences or MAX_HOLIDAY_DAYS days
in a year. Other years are expanded when first asked, and a few are kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final
from zoneinfo import ZoneInfo

from bot.core.calendar.ics_checks import (
    MAX_EVENT_DAYS,
    MAX_EVENTS,
    MAX_HOLIDAY_DAYS,
    MAX_RULE_STEPS,
    IcsError,
    Problem,
    event_problems,
    event_span,
    outline,
    rule_steps,
    span_days,
    where,
)

if TYPE_CHECKING:  # imported when a file is read: a service with no calendar loads neither
    from icalendar import Calendar, Component

__all__ = [
    "MAX_EVENTS",
    "MAX_EVENT_DAYS",
    "MAX_HOLIDAY_DAYS",
    "MAX_ICS_BYTES",
    "MAX_RULE_STEPS",
    "IcsCalendar",
    "IcsError",
    "IcsYear",
    "TimedEvent",
    "parse_ics",
]

MAX_ICS_BYTES: Final = 2 * 1024 * 1024
YEARS_CHECKED: Final = (-1, 0, 1, 2)  # the years around today checked at load
YEARS_KEPT: Final = 8  # expanded years an ICS calendar keeps
_DAY: Final = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class TimedEvent:
    """A quiet interval: from `start` up to, not including, `end`. Both have a zone, or neither
    (a floating time, placed in the calendar's zone when asked)."""

    start: datetime
    end: datetime
    name: str

    def placed(self, zone: ZoneInfo) -> TimedEvent:
        if self.start.tzinfo is not None:
            return self
        return TimedEvent(self.start.replace(tzinfo=zone), self.end.replace(tzinfo=zone), self.name)


@dataclass(frozen=True, slots=True)
class IcsYear:
    """One year's occurrences: the days off of its all-day events (their names joined), and
    its timed events by each day they touch (a UTC day; a floating one's own day)."""

    days: Mapping[date, str]
    timed: Mapping[date, tuple[TimedEvent, ...]]
    floating: Mapping[date, tuple[TimedEvent, ...]]
    occurrences: int = 0
    spanned: int = 0  # the days its occurrences cover, each counted whole
    busiest: str = ""  # the UID with the most occurrences


@dataclass(eq=False)
class IcsCalendar:
    """A parsed file. Equal to another of the same text, so two channels naming one file keep
    one calendar."""

    text: str = field(repr=False)
    calendars: list[Calendar] = field(repr=False)
    events: int = 0  # VEVENTs in the file
    _years: dict[int, IcsYear] = field(default_factory=dict, repr=False)
    _query: list[Any] = field(default_factory=list, repr=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IcsCalendar) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def queries(self) -> list[Any]:
        """One query per VCALENDAR, kept: dateutil caches the repeats it has walked through
        (from DTSTART on), so the next year asked costs only the steps past them."""
        if not self._query:
            import recurring_ical_events  # (see TYPE_CHECKING above)

            self._query = [recurring_ical_events.of(c) for c in self.calendars]
        return self._query

    def year(self, year: int) -> IcsYear:
        found = self._years.get(year)
        if found is None:
            try:
                found = _expand(self.queries(), year)
            except ValueError:  # parse_ics expanded the years around its start without one
                found = IcsYear({}, {}, {})
            self.keep(year, found)
        return found

    def keep(self, year: int, found: IcsYear) -> IcsYear:
        """Keep a year's expansion, dropping the oldest kept past YEARS_KEPT."""
        if len(self._years) >= YEARS_KEPT:
            del self._years[next(iter(self._years))]
        self._years[year] = found
        return found

    def holiday(self, day: date) -> str | None:
        return self.year(day.year).days.get(day)

    def timed_event(self, moment: datetime, zone: ZoneInfo) -> TimedEvent | None:
        """The timed event `moment` falls in (the first found), None if none."""
        utc = moment.astimezone(UTC)
        for event in self.year(utc.year).timed.get(utc.date(), ()):
            if event.start <= moment < event.end:
                return event
        wall = moment.astimezone(zone).replace(tzinfo=None)
        for event in self.year(wall.year).floating.get(wall.date(), ()):
            if event.start <= wall < event.end:
                return event.placed(zone)
        return None


def parse_ics(text: str, today: date) -> IcsCalendar:
    """The calendar of an iCalendar text; IcsError names the line (and UID) of the first
    problem. `today` decides the years checked for too many occurrences."""
    from icalendar import Calendar  # (see TYPE_CHECKING above)

    found = outline(text)
    try:
        calendars = Calendar.from_ical(text + found.closing, multiple=True)
    except ValueError as exc:
        raise IcsError(f"not an iCalendar file icalendar can read: {str(exc)[:200]}") from None
    events = [c for calendar in calendars for c in calendar.subcomponents if c.name == "VEVENT"]
    problems = list(found.problems)
    window = (  # the years checked, in wall time
        datetime(today.year + YEARS_CHECKED[0], 1, 1),  # noqa: DTZ001
        datetime(today.year + YEARS_CHECKED[-1] + 1, 1, 1),  # noqa: DTZ001
    )
    steps = repeats = days = 0
    for lines, event in zip(found.events, events, strict=False):
        mine = event_problems(lines, event)
        if not mine:
            days += span_days(*event_span(event))
            more_steps, more_repeats = rule_steps(event, window)
            steps, repeats = steps + more_steps, repeats + more_repeats
            sizes = (days, steps, repeats)
            mine = _size_problems(lines.begun, lines.line("RRULE"), event, sizes, window[1].year)
        problems += mine
    if problems:
        raise IcsError(min(problems, key=lambda problem: problem[0])[1])
    if not events:
        raise IcsError("no VEVENT in the file: it names no holiday")
    calendar = IcsCalendar(text, calendars, len(events))
    _check_years(
        calendar,
        today,
        {str(e.get("UID")): n.begun for n, e in zip(found.events, events, strict=False)},
    )
    return calendar


def _size_problems(
    begun: int, rule_line: int, event: Component, sizes: tuple[int, int, int], end: int
) -> list[Problem]:
    days, steps, repeats = sizes
    if days > MAX_HOLIDAY_DAYS:
        return [(begun, f"line {begun}: its events span more than {MAX_HOLIDAY_DAYS} days")]
    if steps > MAX_RULE_STEPS:
        why = f"more than {MAX_RULE_STEPS} steps by the end of {end - 1}"
        return [
            (
                rule_line,
                f"line {rule_line}: RRULE repeats too often to expand ({why}){where(event)}",
            )
        ]
    most = MAX_EVENTS * len(YEARS_CHECKED)
    if repeats > most:
        years = f"{end - len(YEARS_CHECKED)} to {end - 1}"
        why = f"RRULE repeats more than {most} times from {years} (with the file's other RRULEs)"
        return [(rule_line, f"line {rule_line}: {why}{where(event)}")]
    return []


def _check_years(calendar: IcsCalendar, today: date, lines: Mapping[str, int]) -> None:
    """IcsError when a year around today has more than MAX_EVENTS occurrences or
    MAX_HOLIDAY_DAYS days: the expansion itself is what a scheduler tick would pay."""
    for offset in YEARS_CHECKED:
        year = today.year + offset
        try:
            found = _expand(calendar.queries(), year)
        except ValueError as exc:
            raise IcsError(f"cannot expand its repeats in {year}: {str(exc)[:200]}") from None
        calendar.keep(year, found)
        if found.occurrences > MAX_EVENTS or found.spanned > MAX_HOLIDAY_DAYS:
            line = lines.get(found.busiest, 0)
            raise IcsError(
                f"line {line}: {year} has more than {MAX_EVENTS} events or {MAX_HOLIDAY_DAYS} days"
                f" once repeats are counted, most of them UID {found.busiest!r}"
            )


def _expand(queries: list[Any], year: int) -> IcsYear:
    """The occurrences touching `year` (a day either side, for the zones)."""
    days: dict[date, list[str]] = {}
    timed: dict[date, list[TimedEvent]] = {}
    floating: dict[date, list[TimedEvent]] = {}
    count = spanned = 0
    per_uid: dict[str, int] = {}
    for query in queries:
        # A span without a zone: recurring_ical_events reads it in each event's own zone.
        span = datetime(year - 1, 12, 31), datetime(year + 1, 1, 2)  # noqa: DTZ001
        for occurrence in query.between(*span):
            start, end = event_span(occurrence)
            name = " ".join(str(occurrence.get("SUMMARY", "")).split())
            count += 1
            spanned += span_days(start, end)
            uid = str(occurrence.get("UID"))
            per_uid[uid] = per_uid.get(uid, 0) + 1
            if isinstance(start, datetime) and isinstance(end, datetime):
                _index_timed(TimedEvent(start, end, name or "busy"), timed, floating)
            else:
                _add_days(start, end, year, name or "holiday", days)
    busiest = max(per_uid, key=lambda uid: per_uid[uid], default="")
    return IcsYear(
        {day: "; ".join(names) for day, names in days.items()},
        {day: tuple(found) for day, found in timed.items()},
        {day: tuple(found) for day, found in floating.items()},
        count,
        spanned,
        busiest,
    )


def _add_days(start: date, end: date, year: int, name: str, days: dict[date, list[str]]) -> None:
    day = max(start, date(year, 1, 1))
    while day < end and day.year == year:
        if name not in days.setdefault(day, []):
            days[day].append(name)
        day += _DAY


def _index_timed(
    event: TimedEvent, timed: dict[date, list[TimedEvent]], floating: dict[date, list[TimedEvent]]
) -> None:
    if event.end <= event.start:
        return  # no time at all: nothing to keep quiet
    aware = event.start.tzinfo is not None
    index = timed if aware else floating
    first = event.start.astimezone(UTC) if aware else event.start
    last = event.end.astimezone(UTC) if aware else event.end
    day, stop = first.date(), (last - timedelta(microseconds=1)).date()
    while day <= stop:
        index.setdefault(day, []).append(event)
        day += _DAY
