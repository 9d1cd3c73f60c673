"""Which calendar a subscription keeps: its destination's, else the default one, minus
what the subscription's own switches drop (`urgent`: quiet time; `holidays: false`: holidays).

The config's top-level `calendar:` is the default for every destination (chat-made ones too); a
config channel's own `calendar:` is its destination's. A calendar with no zone of its own runs
in the zone of the subscription asking (its channel's `timezone:`, else the top-level one), so
"a day" is the same day the cron counts in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from bot.core.calendar.holidays import HolidaySource
from bot.core.calendar.model import EVERY_DAY, QuietHours, WorkingCalendar
from bot.core.models import Platform


class Placed(Protocol):
    """What the book reads of a subscription (bot.core.store.subscriptions.Subscription)."""

    @property
    def platform(self) -> Platform: ...

    @property
    def target(self) -> str: ...

    @property
    def timezone(self) -> str: ...

    @property
    def urgent(self) -> bool: ...

    @property
    def holidays(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class CalendarSpec:
    """A calendar as configured: its zone may be left to the subscription."""

    zone: str | None = None
    workdays: frozenset[int] = EVERY_DAY
    quiet: QuietHours | None = None
    holidays: HolidaySource | None = None

    def at(self, zone: str) -> WorkingCalendar:
        return WorkingCalendar(self.zone or zone, self.workdays, self.quiet, self.holidays)


@dataclass
class CalendarBook:
    """Destination (platform, target) → its calendar spec; `default` for the rest."""

    default: CalendarSpec = field(default_factory=CalendarSpec)
    destinations: Mapping[tuple[Platform, str], CalendarSpec] = field(default_factory=dict)
    # Each calendar built once and kept: the tick keys its verdicts by the calendar's identity.
    _built: dict[tuple[CalendarSpec, str, bool, bool], WorkingCalendar] = field(
        default_factory=dict
    )

    def for_destination(
        self,
        platform: Platform,
        target: str,
        zone: str,
        urgent: bool = False,
        holidays: bool = True,
    ) -> WorkingCalendar:
        """The destination's calendar in `zone`, as a subscription with these switches keeps
        it (`urgent`: no quiet time; `holidays=False`: no holiday calendar)."""
        spec = self.destinations.get((platform, target), self.default)
        key = (spec, zone, urgent, holidays)
        found = self._built.get(key)
        if found is None:
            found = self._built[key] = spec.at(zone).for_route(urgent, holidays)
        return found

    def holiday_sources(self) -> set[HolidaySource | None]:
        """Every holiday calendar a subscription may keep (None: none, as `holidays: false`
        keeps)."""
        specs = (self.default, *self.destinations.values())
        return {None} | {spec.holidays for spec in specs}

    def for_subscription(self, sub: Placed) -> WorkingCalendar:
        """The calendar that holds `sub`: its destination's, minus what its switches drop."""
        return self.for_destination(
            sub.platform, sub.target, sub.timezone, sub.urgent, sub.holidays
        )
