"""A destination's working calendar: workdays, quiet hours, holidays, and the next
fire time that falls on working time."""

from bot.core.calendar.book import CalendarBook, CalendarSpec
from bot.core.calendar.holidays import (
    CalendarError,
    CountryHolidays,
    HolidaySource,
    IcsHolidays,
    check_country,
    load_ics,
)
from bot.core.calendar.model import (
    EVERY_DAY,
    Block,
    BlockKind,
    QuietHours,
    WorkingCalendar,
    days_text,
    parse_workdays,
)

__all__ = [
    "EVERY_DAY",
    "Block",
    "BlockKind",
    "CalendarBook",
    "CalendarError",
    "CalendarSpec",
    "CountryHolidays",
    "HolidaySource",
    "IcsHolidays",
    "QuietHours",
    "WorkingCalendar",
    "check_country",
    "days_text",
    "load_ics",
    "parse_workdays",
]
