"""Where a destination's holidays come from: a country code (the `holidays` package) or an
iCalendar file. Each answers, for a day, the holiday's name or None, and whether the day is
a make-up working day (China's 调休 weekends: the country's calendar moves a weekend day's
rest to a holiday and the weekend day is worked); and, for a moment, the timed event (a quiet
interval) it falls in, which only a file has.

Both keep their days per year in a small cache, so a scheduler tick asking about a few hundred
subscriptions reads a dict, not the `holidays` package.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Protocol
from zoneinfo import ZoneInfo

from bot.core.calendar.ics import MAX_ICS_BYTES, IcsCalendar, IcsError, TimedEvent, parse_ics

YEARS_CACHED = 64  # (source, year) pairs kept: a few sources, a few years each


class CalendarError(ValueError):
    """A calendar setting that cannot be used; the message says why."""


class HolidaySource(Protocol):
    @property
    def label(self) -> str: ...

    def holiday(self, day: date) -> str | None: ...

    def makeup_workday(self, day: date) -> bool: ...

    def timed_event(self, moment: datetime, zone: str) -> TimedEvent | None:
        """The timed event (a quiet interval) `moment` falls in; a floating time is read in
        `zone`, the calendar's."""
        ...


@dataclass(frozen=True, slots=True)
class _Year:
    names: Mapping[date, str]
    worked: frozenset[date]


@lru_cache(maxsize=YEARS_CACHED)
def _country_year(country: str, subdivision: str | None, year: int) -> _Year:
    import holidays as holidays_lib  # here: it takes 0.1 s to import, and most runs need none

    found = holidays_lib.country_holidays(country, subdiv=subdivision, years=year)
    worked: set[date] = getattr(found, "weekend_workdays", set())
    return _Year(
        names={day: str(name) for day, name in found.items() if day.year == year},
        worked=frozenset(day for day in worked if day.year == year),
    )


def check_country(country: str, subdivision: str | None = None) -> None:
    """CalendarError unless the `holidays` package knows the country (and subdivision)."""
    import holidays as holidays_lib  # see _country_year

    supported = holidays_lib.list_supported_countries()
    if country not in supported:
        raise CalendarError(
            f"unknown country code {country!r} (use an ISO 3166 code the holidays package"
            " knows, e.g. CN, US, DE, JP)"
        )
    if subdivision is not None and subdivision not in supported[country]:
        known = ", ".join(supported[country][:20]) or "none"
        raise CalendarError(
            f"{country} has no subdivision {subdivision!r} (known: {known}"
            f"{', ...' if len(supported[country]) > 20 else ''})"
        )


@dataclass(frozen=True, slots=True)
class CountryHolidays:
    country: str
    subdivision: str | None = None

    @property
    def label(self) -> str:
        return self.country + (f"-{self.subdivision}" if self.subdivision else "")

    def holiday(self, day: date) -> str | None:
        return _country_year(self.country, self.subdivision, day.year).names.get(day)

    def makeup_workday(self, day: date) -> bool:
        return day in _country_year(self.country, self.subdivision, day.year).worked

    def timed_event(self, moment: datetime, zone: str) -> TimedEvent | None:
        return None  # a country's holidays are whole days


@dataclass(frozen=True, slots=True)
class IcsHolidays:
    """An ICS file's all-day events as holidays and its timed events as quiet intervals."""

    path: str
    calendar: IcsCalendar = field(repr=False)

    @property
    def label(self) -> str:
        return self.path

    def holiday(self, day: date) -> str | None:
        return self.calendar.holiday(day)

    def makeup_workday(self, day: date) -> bool:
        return False

    def timed_event(self, moment: datetime, zone: str) -> TimedEvent | None:
        return self.calendar.timed_event(moment, ZoneInfo(zone))


@lru_cache(maxsize=4)
def _parsed(text: str, today: date) -> IcsCalendar:
    """A file's text parsed once: the config's validation reads the file twice, and a few
    channels may name the same one (each then keeps the same calendar and expanded years)."""
    return parse_ics(text, today)


def load_ics(path: Path, today: date | None = None) -> IcsHolidays:
    """The holidays of an iCalendar file; CalendarError says why it cannot be used. `today`
    (the machine's by default) decides the years checked for too many repeats."""
    try:
        with path.open("rb") as file:  # no more than the cap, whatever the file (or device) is
            data = file.read(MAX_ICS_BYTES + 1)
    except OSError as exc:
        raise CalendarError(f"cannot read {path}: {exc.strerror}") from None
    if len(data) > MAX_ICS_BYTES:
        limit = MAX_ICS_BYTES // 2**20
        raise CalendarError(f"{path}: larger than {limit} MB (a holiday calendar is a few KB)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CalendarError(f"{path}: not UTF-8 text") from None
    try:
        return IcsHolidays(str(path), _parsed(text, today or datetime.now(UTC).date()))
    except IcsError as exc:
        raise CalendarError(f"{path}: {exc}") from None
