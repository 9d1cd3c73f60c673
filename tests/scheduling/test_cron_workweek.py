"""`workdays 09:30` keeps the make-up working days of the destination's holidays (China's 调休
weekends), as `daily 09:30` does: one rule, the calendar's, says what a working day is."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bot.core.calendar import CountryHolidays, WorkingCalendar, parse_workdays
from bot.core.timing.cron import next_real_fire
from bot.scheduling.due import due_time

SHANGHAI = ZoneInfo("Asia/Shanghai")
CN = WorkingCalendar("Asia/Shanghai", holidays=CountryHolidays("CN"))
CN_MON_FRI = WorkingCalendar(
    "Asia/Shanghai", parse_workdays(["mon-fri"]), holidays=CountryHolidays("CN")
)
WORKDAYS = "30 9 * * mon-fri"  # what `workdays 09:30` means
DAILY = "30 9 * * *"


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 10, day, hour, minute, tzinfo=SHANGHAI)


def test_workdays_fires_on_the_make_up_saturday_after_golden_week() -> None:
    for calendar in (CN, CN_MON_FRI):
        for cron in (WORKDAYS, DAILY, "30 9 * * 1-5"):
            found = next_real_fire(cron, "Asia/Shanghai", at(9, 10), calendar)
            assert found is not None and found.at == at(10, 9, 30), (cron, calendar.workdays)


def test_workdays_skips_an_ordinary_weekend_and_the_holidays() -> None:
    found = next_real_fire(WORKDAYS, "Asia/Shanghai", at(16, 10), CN)
    assert found is not None and found.at == at(19, 9, 30)  # Sat 17, Sun 18 are not worked
    golden = next_real_fire(WORKDAYS, "Asia/Shanghai", at(1, 0), CN)
    assert golden is not None and golden.at == at(8, 9, 30)
    assert "National Day" in golden.note


def test_without_holidays_workdays_is_monday_to_friday() -> None:
    plain = WorkingCalendar("Asia/Shanghai", parse_workdays(["mon-fri"]))
    found = next_real_fire(WORKDAYS, "Asia/Shanghai", at(9, 10), plain)
    assert found is not None and found.at == at(12, 9, 30)


class Sub:
    schedule = WORKDAYS
    timezone = "Asia/Shanghai"
    instant = False


def test_the_scheduler_plans_the_make_up_saturday_and_not_an_ordinary_one() -> None:
    assert due_time(Sub(), at(10, 9, 31), at(9, 9, 30), CN) == at(10, 9, 30)  # type: ignore[arg-type]
    assert due_time(Sub(), at(17, 9, 31), at(16, 9, 30), CN) is None  # type: ignore[arg-type]
    assert due_time(Sub(), at(19, 9, 31), at(16, 9, 30), CN) == at(19, 9, 30)  # type: ignore[arg-type]
