"""A destination's working calendar: workdays, quiet hours across midnight, holidays from a
country code and from an ICS file, the calendar's zone deciding what a day is, and the next
fire time that falls on working time."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.core.calendar import (
    BlockKind,
    CalendarError,
    CountryHolidays,
    QuietHours,
    WorkingCalendar,
    check_country,
    days_text,
    load_ics,
    parse_workdays,
)
from bot.core.calendar.ics import (
    MAX_EVENTS,
    MAX_HOLIDAY_DAYS,
    MAX_ICS_BYTES,
    IcsError,
    parse_ics,
)
from bot.core.timing.cron import next_fire
from bot.core.timing.working import next_working_fire

SHANGHAI = ZoneInfo("Asia/Shanghai")
WEEKDAYS_ONLY = parse_workdays(["mon-fri"])
CN = CountryHolidays("CN")
TODAY = date(2026, 9, 30)  # decides the years an ICS file is checked over
GOLDEN_WEEK_ICS = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//team//holidays//EN
BEGIN:VEVENT
UID:golden-week-2026
DTSTART;VALUE=DATE:20261001
DTEND;VALUE=DATE:20261008
SUMMARY:Golden
  Week
END:VEVENT
BEGIN:VEVENT
UID:new-year
DTSTART;VALUE=DATE:20250101
RRULE:FREQ=YEARLY
SUMMARY:New Year's Day
END:VEVENT
END:VCALENDAR
"""


def local(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=SHANGHAI)


def test_cn_national_day_is_a_holiday_by_its_name() -> None:
    assert CN.holiday(date(2026, 10, 1)) == "National Day"
    assert CN.holiday(date(2026, 9, 30)) is None


def test_a_chinese_make_up_working_sunday_counts_as_a_workday() -> None:
    calendar = WorkingCalendar("Asia/Shanghai", WEEKDAYS_ONLY, holidays=CN)
    assert calendar.is_working(local(2026, 9, 20, 10))  # a Sunday worked for Golden Week
    assert not calendar.is_working(local(2026, 9, 27, 10))  # an ordinary Sunday


def test_an_unknown_country_or_subdivision_is_refused_with_the_reason() -> None:
    with pytest.raises(CalendarError, match="unknown country code 'XX'"):
        check_country("XX")
    with pytest.raises(CalendarError, match="US has no subdivision 'ZZ'"):
        check_country("US", "ZZ")
    check_country("US", "CA")


def test_workdays_read_names_and_ranges() -> None:
    assert parse_workdays(["mon", "tue", "wed", "thu", "fri"]) == WEEKDAYS_ONLY
    assert parse_workdays(["fri-mon"]) == {4, 5, 6, 0}
    assert parse_workdays(["Monday", "wed"]) == {0, 2}
    assert days_text(WEEKDAYS_ONLY) == "mon-fri"
    with pytest.raises(CalendarError, match="unknown day 'funday'"):
        parse_workdays(["funday"])
    with pytest.raises(CalendarError, match="no workday"):
        parse_workdays([])


def test_a_weekend_is_not_working_time_on_a_mon_fri_calendar() -> None:
    calendar = WorkingCalendar("Asia/Shanghai", WEEKDAYS_ONLY)
    block = calendar.block(local(2026, 9, 5, 9))  # a Saturday
    assert block is not None and block.kind is BlockKind.DAY_OFF
    assert calendar.is_working(local(2026, 9, 7, 9))


@pytest.mark.parametrize(
    ("clock", "quiet"),
    [("21:59", False), ("22:00", True), ("23:59", True), ("00:00", True), ("07:59", True),
     ("08:00", False), ("12:00", False)],
)  # fmt: skip
def test_quiet_hours_wrap_midnight(clock: str, quiet: bool) -> None:
    hours, minutes = (int(part) for part in clock.split(":"))
    calendar = WorkingCalendar("Asia/Shanghai", quiet=QuietHours.parse("22:00-08:00"))
    assert calendar.is_working(local(2026, 9, 1, hours, minutes)) is not quiet


def test_quiet_hours_within_a_day_and_bad_ranges() -> None:
    lunch = QuietHours.parse("12:00-13:00")
    assert lunch.text == "12:00-13:00"
    calendar = WorkingCalendar("UTC", quiet=lunch)
    assert not calendar.is_working(datetime(2026, 9, 1, 12, 30, tzinfo=UTC))
    assert calendar.is_working(datetime(2026, 9, 1, 13, 0, tzinfo=UTC))
    with pytest.raises(CalendarError, match="not a range of times"):
        QuietHours.parse("22-08")
    with pytest.raises(CalendarError, match="same time"):
        QuietHours.parse("08:00-08:00")


def test_the_calendars_zone_decides_what_a_day_is() -> None:
    # 2026-09-30 17:00 UTC is already 1 October, National Day, in Shanghai.
    moment = datetime(2026, 9, 30, 17, 0, tzinfo=UTC)
    assert not WorkingCalendar("Asia/Shanghai", holidays=CN).is_working(moment)
    assert WorkingCalendar("UTC", holidays=CN).is_working(moment)


def test_the_next_working_moment_is_the_end_of_quiet_hours_or_the_next_working_day() -> None:
    calendar = WorkingCalendar(
        "Asia/Shanghai", WEEKDAYS_ONLY, QuietHours.parse("22:00-08:00"), holidays=CN
    )
    assert calendar.next_working(local(2026, 9, 29, 23, 0)) == local(2026, 9, 30, 8, 0)
    assert calendar.next_working(local(2026, 9, 30, 23, 0)) == local(2026, 10, 8, 8, 0)
    assert calendar.next_working(local(2026, 9, 30, 9, 0)) == local(2026, 9, 30, 9, 0)


def test_holidays_from_an_ics_file(tmp_path: Path) -> None:
    path = tmp_path / "holidays.ics"
    path.write_text(GOLDEN_WEEK_ICS.replace("\n", "\r\n"), encoding="utf-8")
    source = load_ics(path)
    assert source.holiday(date(2026, 10, 1)) == "Golden Week"
    assert source.holiday(date(2026, 10, 7)) == "Golden Week"
    assert source.holiday(date(2026, 10, 8)) is None
    assert source.holiday(date(2027, 1, 1)) == "New Year's Day"  # RRULE:FREQ=YEARLY
    assert source.holiday(date(2024, 1, 1)) is None  # not before it started


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("hello\n", "line 1: an iCalendar file starts with BEGIN:VCALENDAR"),
        ("BEGIN:VCALENDAR\nEND:VCALENDAR\n", "no VEVENT"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:x\nEND:VEVENT\n", "line 2: a VEVENT without"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:2026-10-01\nEND:VEVENT\n", "line 3: '2026-10-01'"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20261001\n", "line 2: a VEVENT that never ends"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20261001\nRRULE:FREQ=SOMETIMES\nEND:VEVENT\n",
         "line 4: RRULE 'FREQ=SOMETIMES'"),
        ("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20261001\nDTEND:20260901\nEND:VEVENT\n",
         "line 4: DTEND must be"),
    ],
)  # fmt: skip
def test_a_malformed_ics_file_says_which_line(text: str, reason: str) -> None:
    with pytest.raises(IcsError, match=reason.replace("(", r"\(")):
        parse_ics(text, TODAY)


def test_an_unreadable_ics_file_is_a_calendar_error(tmp_path: Path) -> None:
    with pytest.raises(CalendarError, match="cannot read"):
        load_ics(tmp_path / "missing.ics")
    (tmp_path / "bad.ics").write_bytes(b"\xff\xfe")
    with pytest.raises(CalendarError, match="not UTF-8"):
        load_ics(tmp_path / "bad.ics")


def _many_events(count: int, days: int = 1) -> str:
    """An iCalendar text of `count` events of `days` days each."""
    lines = ["BEGIN:VCALENDAR"]
    for n in range(count):
        start = date(2026, 1, 1) + timedelta(days=n % 300)
        end = start + timedelta(days=days)
        lines += ["BEGIN:VEVENT", f"DTSTART;VALUE=DATE:{start:%Y%m%d}",
                  f"DTEND;VALUE=DATE:{end:%Y%m%d}", "END:VEVENT"]  # fmt: skip
    return "\n".join([*lines, "END:VCALENDAR"]) + "\n"


def test_an_ics_file_past_the_size_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.ics"
    text = _many_events(1)
    path.write_text(text + " " * (MAX_ICS_BYTES + 1 - len(text)), encoding="utf-8")
    with pytest.raises(CalendarError) as caught:
        load_ics(path)
    assert str(caught.value) == f"{path}: larger than 2 MB (a holiday calendar is a few KB)"
    path.write_text(text + " " * (MAX_ICS_BYTES - len(text)), encoding="utf-8")
    assert load_ics(path).calendar.events == 1, "up to the cap is read"


def test_an_ics_file_of_too_many_events_or_days_is_refused_with_the_line() -> None:
    assert parse_ics(_many_events(MAX_EVENTS), TODAY).events == MAX_EVENTS
    with pytest.raises(IcsError) as caught:
        parse_ics(_many_events(MAX_EVENTS + 1), TODAY)
    line = 2 + 4 * MAX_EVENTS  # the BEGIN:VEVENT of the event past the cap
    assert str(caught.value) == (
        f"line {line}: more than {MAX_EVENTS} events (a holiday calendar has a few hundred)"
    )
    too_long = MAX_HOLIDAY_DAYS // 366 + 1  # year-long events
    with pytest.raises(IcsError, match=f"span more than {MAX_HOLIDAY_DAYS} days"):
        parse_ics(_many_events(too_long, days=366), TODAY)


def test_the_next_real_fire_skips_golden_week_and_says_so() -> None:
    calendar = WorkingCalendar("Asia/Shanghai", WEEKDAYS_ONLY, holidays=CN)
    found = next_working_fire(
        calendar, "0 9 * * *", "Asia/Shanghai", local(2026, 9, 30, 10), next_fire
    )
    assert found is not None
    assert found.at == local(2026, 10, 8, 9)
    assert found.note == (
        "(after the holidays 2026-10-01 to 2026-10-07: National Day, National Day (observed), ...)"
    )


def test_the_next_real_fire_on_a_working_day_has_no_note() -> None:
    calendar = WorkingCalendar("Asia/Shanghai", WEEKDAYS_ONLY, holidays=CN)
    found = next_working_fire(
        calendar, "0 9 * * *", "Asia/Shanghai", local(2026, 9, 4, 10), next_fire
    )
    assert found is not None and found.at == local(2026, 9, 7, 9) and found.note == ""


def test_a_fire_inside_quiet_hours_moves_to_the_next_fire_outside_them() -> None:
    calendar = WorkingCalendar("Asia/Shanghai", quiet=QuietHours.parse("22:00-08:00"))
    found = next_working_fire(
        calendar, "0 */6 * * *", "Asia/Shanghai", local(2026, 9, 1, 19), next_fire
    )
    assert found is not None and found.at == local(2026, 9, 2, 12)  # 00:00 and 06:00 are quiet


def test_a_schedule_never_on_working_time_has_no_next_real_fire() -> None:
    calendar = WorkingCalendar("Asia/Shanghai", WEEKDAYS_ONLY)
    assert (
        next_working_fire(calendar, "0 9 * * sat", "Asia/Shanghai", local(2026, 9, 1), next_fire)
        is None
    )


def test_a_calendar_with_nothing_configured_is_always_working() -> None:
    calendar = WorkingCalendar("UTC")
    assert calendar.always and calendar.block(datetime(2026, 10, 1, 3, tzinfo=UTC)) is None
