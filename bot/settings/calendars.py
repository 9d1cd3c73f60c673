"""The config's `calendar:` (top level: every destination's default; in a channel: its
destination's), validated at load like the rest: a bad day, quiet-hours range, country code or
ICS file fails with the key's path and the reason.

    calendar:
      timezone: Asia/Shanghai         # default: the zone of the subscription (channel, else top)
      workdays: [mon, tue, wed, thu, fri]   # default: every day
      quiet_hours: "22:00-08:00"      # nothing is sent inside; may wrap midnight
      holidays: {country: CN}         # or {country: US, subdivision: CA} or {ics: path.ics}

A channel's `calendar:` overrides the top-level one key by key: the keys it sets replace the
top level's (`holidays: null` removes them), the rest are inherited. It is its destination's
calendar: channels that share a target and give a `calendar:` must give the same one, and
those that give none keep it too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from bot.core.calendar import (
    EVERY_DAY,
    CalendarBook,
    CalendarError,
    CalendarSpec,
    CountryHolidays,
    HolidaySource,
    IcsHolidays,
    QuietHours,
    check_country,
    load_ics,
    parse_workdays,
)
from bot.core.models import Platform
from bot.settings.values import Timezone


class HolidaysConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    country: str | None = None
    subdivision: str | None = None
    ics: Path | None = None
    _ics: IcsHolidays | None = PrivateAttr(default=None)

    @field_validator("country")
    @classmethod
    def _known_country(cls, country: str | None) -> str | None:
        if country is None:
            return None
        code = country.strip().upper()
        _check(lambda: check_country(code))
        return code

    @field_validator("subdivision")
    @classmethod
    def _known_subdivision(cls, subdivision: str | None, info: ValidationInfo) -> str | None:
        country = info.data.get("country")
        if subdivision is None or country is None:
            return subdivision  # no country: _one_source says what is missing
        code = subdivision.strip().upper()
        _check(lambda: check_country(country, code))
        return code

    @field_validator("ics")
    @classmethod
    def _readable_ics(cls, path: Path | None) -> Path | None:
        if path is not None:
            _check(lambda: load_ics(path))
        return path

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if (self.country is None) == (self.ics is None):
            raise ValueError("holidays need exactly one of `country` or `ics`")
        if self.subdivision is not None and self.country is None:
            raise ValueError("`subdivision` goes with `country`, not `ics`")
        if self.ics is not None:
            self._ics = load_ics(self.ics)  # _readable_ics read it once already
        return self

    def source(self) -> HolidaySource:
        if self._ics is not None:
            return self._ics
        assert self.country is not None  # _one_source: a country or an ICS file
        return CountryHolidays(self.country, self.subdivision)


class CalendarConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    timezone: Timezone | None = None
    workdays: list[str] | None = None  # None: every day
    quiet_hours: str | None = None
    holidays: HolidaysConfig | None = None

    @field_validator("workdays")
    @classmethod
    def _days(cls, days: list[str] | None) -> list[str] | None:
        if days is not None:
            _check(lambda: parse_workdays(days))
        return days

    @field_validator("quiet_hours")
    @classmethod
    def _range(cls, text: str | None) -> str | None:
        if text is not None:
            _check(lambda: QuietHours.parse(text))
        return text

    def spec(self) -> CalendarSpec:
        return CalendarSpec(
            zone=self.timezone,
            workdays=EVERY_DAY if self.workdays is None else parse_workdays(self.workdays),
            quiet=None if self.quiet_hours is None else QuietHours.parse(self.quiet_hours),
            holidays=None if self.holidays is None else self.holidays.source(),
        )

    def over(self, base: CalendarConfig | None) -> CalendarConfig:
        """This calendar's keys over `base`'s: the keys set here win."""
        if base is None:
            return self
        return base.model_copy(update={key: getattr(self, key) for key in self.model_fields_set})


def _check(read: Callable[[], object]) -> None:
    try:
        read()
    except CalendarError as exc:
        raise ValueError(str(exc)) from None


def calendar_book(top: CalendarConfig | None, channels: list[Any]) -> CalendarBook:
    """The calendars of a config: the top level's for every destination, a channel's own for
    its destination."""
    default = top.spec() if top is not None else CalendarSpec()
    own = {
        (channel.platform, channel.target): channel.calendar.over(top).spec()
        for channel in channels
        if channel.calendar is not None
    }
    return CalendarBook(default, own)


def shared_calendar_problem(top: CalendarConfig | None, channels: list[Any]) -> str | None:
    """Channels that share a target share a destination, so those that give a `calendar:`
    must give the same one (the others keep it too)."""
    seen: dict[tuple[Platform, str], tuple[int, CalendarConfig]] = {}
    for index, channel in enumerate(channels):
        if channel.calendar is None:
            continue
        mine = channel.calendar.over(top)
        first = seen.setdefault((channel.platform, channel.target), (index, mine))
        if first[1] != mine:
            return (
                f"channels[{index}].calendar: channels[{first[0]}] posts to the same target with"
                " another calendar (a calendar is per destination: give one, or the same one)"
            )
    return None
