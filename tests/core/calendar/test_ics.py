"""ICS files read as RFC 5545 says: each file is built with `icalendar`, and the days off it
should give come from `recurring_ical_events` (the reference), checked against what the
calendar answers: EXDATE, DURATION, RECURRENCE-ID, TZID, COUNT, UNTIL, folded lines, CRLF and
LF, and a U+2028 inside a SUMMARY. A timed event is a quiet interval in its own zone."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import recurring_ical_events
from icalendar import Calendar, Event, vRecur

from bot.core.calendar import (
    BlockKind,
    CalendarError,
    WorkingCalendar,
    load_ics,
)
from bot.core.calendar.ics import MAX_EVENTS, MAX_HOLIDAY_DAYS, MAX_RULE_STEPS
from bot.core.models import Platform
from bot.core.timing.cron import next_fire
from bot.core.timing.working import next_working_fire
from bot.settings import load_config

BERLIN = ZoneInfo("Europe/Berlin")
YEARS = (2026, 2027)


def _calendar(*events: Event) -> Calendar:
    calendar = Calendar()
    calendar.add("prodid", "-//prdigest tests//EN")
    calendar.add("version", "2.0")
    for event in events:
        calendar.add_component(event)
    return calendar


def _event(uid: str, start: date, summary: str = "Holiday", **props: object) -> Event:
    event = Event()
    event.add("uid", uid)
    event.add("dtstart", start)
    event.add("summary", summary)
    for name, value in props.items():
        event.add(name.replace("_", "-"), value)
    return event


def _write(tmp_path: Path, calendar: Calendar, newline: bytes = b"\r\n") -> Path:
    path = tmp_path / "calendar.ics"
    path.write_bytes(calendar.to_ical().replace(b"\r\n", newline))
    return path


def _reference_days(path: Path) -> set[date]:
    """The all-day days recurring_ical_events finds in the file, over YEARS."""
    calendar = Calendar.from_ical(path.read_bytes())
    days: set[date] = set()
    for occurrence in recurring_ical_events.of(calendar).between(
        date(YEARS[0], 1, 1), date(YEARS[-1] + 1, 1, 1)
    ):
        start, end = occurrence["DTSTART"].dt, occurrence["DTEND"].dt
        days.update(start + timedelta(days=n) for n in range((end - start).days))
    return {day for day in days if day.year in YEARS}


def _read_days(path: Path) -> set[date]:
    source = load_ics(path)
    first, last = date(YEARS[0], 1, 1), date(YEARS[-1], 12, 31)
    days = (first + timedelta(days=n) for n in range((last - first).days + 1))
    return {day for day in days if source.holiday(day) is not None}


CASES: dict[str, tuple[Callable[[], Calendar], set[date] | None]] = {
    "EXDATE": (
        lambda: _calendar(
            _event(
                "ex",
                date(2026, 10, 1),
                rrule=vRecur(freq="daily", count=5),
                exdate=date(2026, 10, 3),
            )
        ),
        {date(2026, 10, 1), date(2026, 10, 2), date(2026, 10, 4), date(2026, 10, 5)},
    ),
    "DURATION": (
        lambda: _calendar(_event("dur", date(2026, 10, 1), duration=timedelta(days=3))),
        {date(2026, 10, 1), date(2026, 10, 2), date(2026, 10, 3)},
    ),
    "RECURRENCE-ID": (
        lambda: _calendar(
            _event("weekly", date(2026, 11, 2), rrule=vRecur(freq="weekly", count=3)),
            _event("weekly", date(2026, 11, 11), recurrence_id=date(2026, 11, 9)),
        ),
        {date(2026, 11, 2), date(2026, 11, 11), date(2026, 11, 16)},
    ),
    "COUNT": (
        lambda: _calendar(_event("count", date(2025, 5, 1), rrule=vRecur(freq="yearly", count=2))),
        {date(2026, 5, 1)},
    ),
    "UNTIL": (
        lambda: _calendar(
            _event("until", date(2026, 12, 28), rrule=vRecur(freq="daily", until=date(2027, 1, 2)))
        ),
        {date(2026, 12, d) for d in range(28, 32)} | {date(2027, 1, 1), date(2027, 1, 2)},
    ),
    "multi-day with DTEND": (
        lambda: _calendar(_event("gw", date(2026, 10, 1), dtend=date(2026, 10, 8))),
        {date(2026, 10, d) for d in range(1, 8)},
    ),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("newline", [b"\r\n", b"\n"], ids=["CRLF", "LF"])
def test_the_days_off_of_a_file_are_those_recurring_ical_events_finds(
    tmp_path: Path, case: str, newline: bytes
) -> None:
    build, expected = CASES[case]
    path = _write(tmp_path, build(), newline)
    assert _read_days(path) == _reference_days(path)
    assert _read_days(path) == expected


def test_a_folded_summary_with_an_escaped_semicolon_and_a_u2028_is_one_name(
    tmp_path: Path,
) -> None:
    long_name = "National Day; Golden Week " + "and the days around it " * 4 + "\u2028(CN)"
    path = _write(tmp_path, _calendar(_event("gw", date(2026, 10, 1), long_name)))
    assert b"\\;" in path.read_bytes() and b"\r\n " in path.read_bytes()  # escaped and folded
    name = load_ics(path).holiday(date(2026, 10, 1))
    assert name == " ".join(long_name.split())
    assert _read_days(path) == _reference_days(path) == {date(2026, 10, 1)}


def _berlin_meeting(tmp_path: Path, **props: object) -> Path:
    start = datetime(2026, 10, 5, 9, 0, tzinfo=BERLIN)
    meeting = _event("meeting", start, "Planning", dtend=start + timedelta(hours=2), **props)
    return _write(tmp_path, _calendar(meeting, _event("gw", date(2026, 10, 1))))


def test_a_timed_event_in_its_own_zone_is_a_quiet_interval_not_a_day_off(
    tmp_path: Path,
) -> None:
    calendar = WorkingCalendar("Asia/Shanghai", holidays=load_ics(_berlin_meeting(tmp_path)))
    inside = datetime(2026, 10, 5, 8, 0, tzinfo=UTC)  # 10:00 in Berlin
    block = calendar.block(inside)
    assert block is not None and block.kind is BlockKind.QUIET and block.name == "Planning"
    assert block.until == datetime(2026, 10, 5, 11, 0, tzinfo=BERLIN)
    assert calendar.block(datetime(2026, 10, 5, 6, 59, tzinfo=UTC)) is None  # 08:59 Berlin
    assert calendar.block(datetime(2026, 10, 5, 9, 0, tzinfo=UTC)) is None  # its end
    assert calendar.next_working(inside) == datetime(2026, 10, 5, 9, 0, tzinfo=UTC)
    day_off = calendar.block(datetime(2026, 10, 1, 4, 0, tzinfo=UTC))  # the all-day event
    assert day_off is not None and day_off.kind is BlockKind.HOLIDAY


def test_the_next_real_fire_skips_a_timed_event(tmp_path: Path) -> None:
    calendar = WorkingCalendar("Europe/Berlin", holidays=load_ics(_berlin_meeting(tmp_path)))
    after = datetime(2026, 10, 5, 9, 10, tzinfo=BERLIN)  # inside the 09:00-11:00 meeting
    found = next_working_fire(calendar, "*/30 * * * *", "Europe/Berlin", after, next_fire)
    assert found is not None and found.at == datetime(2026, 10, 5, 11, 0, tzinfo=BERLIN)
    assert found.holidays == ()  # a quiet interval is no holiday


def test_a_weekly_timed_event_with_an_exdate_is_quiet_on_the_other_weeks(
    tmp_path: Path,
) -> None:
    path = _berlin_meeting(
        tmp_path,
        rrule=vRecur(freq="weekly", count=3),
        exdate=datetime(2026, 10, 12, 9, 0, tzinfo=BERLIN),
    )
    calendar = WorkingCalendar("UTC", holidays=load_ics(path))
    quiet = [
        calendar.block(datetime(2026, 10, day, 8, 0, tzinfo=UTC)) is not None
        for day in (5, 12, 19, 26)
    ]
    assert quiet == [True, False, True, False]


def test_a_floating_timed_event_is_read_in_the_calendars_zone(tmp_path: Path) -> None:
    start = datetime(2026, 10, 6, 9, 30)  # noqa: DTZ001  # floating: no zone, on purpose
    floating = _event("stand-up", start, "Stand-up", dtend=start + timedelta(minutes=30))
    source = load_ics(_write(tmp_path, _calendar(floating)))
    tokyo = WorkingCalendar("Asia/Tokyo", holidays=source)
    assert tokyo.block(datetime(2026, 10, 6, 9, 45, tzinfo=ZoneInfo("Asia/Tokyo"))) is not None
    assert (
        WorkingCalendar("UTC", holidays=source).block(
            datetime(2026, 10, 6, 9, 45, tzinfo=ZoneInfo("Asia/Tokyo"))
        )
        is None
    )


TODAY = date(2026, 12, 5)  # the years 2025 to 2028 are checked for too many repeats


def _error(tmp_path: Path, calendar: Calendar) -> str:
    path = _write(tmp_path, calendar)
    with pytest.raises(CalendarError) as caught:
        load_ics(path, TODAY)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    return message.removeprefix(f"{path}: ")


def test_an_unknown_tzid_names_its_line_and_the_uid(tmp_path: Path) -> None:
    text = _calendar(_event("gw", date(2026, 10, 1))).to_ical().decode()
    mars = "BEGIN:VEVENT\r\nUID:standup\r\nDTSTART;TZID=Mars/Olympus:20261005T090000\r\n"
    text = text.replace("END:VCALENDAR", mars + "END:VEVENT\r\nEND:VCALENDAR")
    path = tmp_path / "mars.ics"
    path.write_text(text, encoding="utf-8")
    line = text.split("\r\n").index("DTSTART;TZID=Mars/Olympus:20261005T090000") + 1
    with pytest.raises(CalendarError) as caught:
        load_ics(path, TODAY)
    assert str(caught.value) == (
        f"{path}: line {line}: TZID 'Mars/Olympus' is not a time zone (an IANA name, or one a"
        " VTIMEZONE of the file defines) (UID 'standup')"
    )


def test_a_minutely_rule_without_end_is_refused_without_being_expanded(tmp_path: Path) -> None:
    every_minute = _event("tick", datetime(2026, 1, 1, 0, 0, tzinfo=UTC), "tick",
                          dtend=datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC),
                          rrule=vRecur(freq="minutely"))  # fmt: skip
    message = _error(tmp_path, _calendar(every_minute))
    assert message.endswith(
        f"RRULE repeats too often to expand (more than {MAX_RULE_STEPS} steps by the end of 2028)"
        " (UID 'tick')"
    )
    assert message.startswith("line ")


def test_a_rule_giving_too_many_occurrences_in_a_year_is_refused_with_its_uid(
    tmp_path: Path,
) -> None:
    hourly = vRecur(freq="daily", byhour=list(range(24)))  # 8,760 a year
    busy = _event("hourly", datetime(2027, 1, 1, 0, 0, tzinfo=UTC), "busy",
                  duration=timedelta(minutes=5), rrule=hourly)  # fmt: skip
    message = _error(tmp_path, _calendar(_event("gw", date(2026, 10, 1)), busy))
    assert message.endswith(
        f"2027 has more than {MAX_EVENTS} events or {MAX_HOLIDAY_DAYS} days once repeats are"
        " counted, most of them UID 'hourly'"
    )


def test_a_yearly_rule_expands_to_a_day_a_year(tmp_path: Path) -> None:
    yearly = _event("ny", date(1990, 1, 1), "New Year", rrule=vRecur(freq="yearly"))
    source = load_ics(_write(tmp_path, _calendar(yearly)), TODAY)
    assert source.holiday(date(2027, 1, 1)) == "New Year"
    assert source.holiday(date(2040, 1, 1)) == "New Year"  # a year outside those checked
    assert source.holiday(date(1989, 1, 1)) is None


def test_an_hourly_rule_without_end_is_refused_before_its_years_are_expanded(
    tmp_path: Path,
) -> None:
    hourly = _event("ping", datetime(2025, 1, 1, 0, 0, tzinfo=UTC), "ping",
                    duration=timedelta(minutes=1), rrule=vRecur(freq="hourly"))  # fmt: skip
    message = _error(tmp_path, _calendar(hourly))
    assert message.endswith(
        f"RRULE repeats more than {MAX_EVENTS * 4} times from 2025 to 2028 (with the file's"
        " other RRULEs) (UID 'ping')"
    )


def test_a_file_read_twice_is_parsed_once(tmp_path: Path) -> None:
    path = _write(tmp_path, _calendar(_event("gw", date(2026, 10, 1))))
    first, second = load_ics(path, TODAY), load_ics(path, TODAY)
    assert first == second and first.calendar is second.calendar


def test_a_config_naming_a_file_with_a_timed_tzid_event_loads_and_keeps_it_quiet(
    tmp_path: Path,
) -> None:
    ics = _berlin_meeting(tmp_path)
    yaml = tmp_path / "bot.yaml"
    yaml.write_text(
        f"calendar: {{timezone: UTC, holidays: {{ics: '{ics}'}}}}\n"
        "channels:\n"
        "  - {name: a, platform: console, target: team, cadence: 'daily 09:00'}\n"
        "  - {name: b, platform: console, target: team, cadence: 'daily 17:00',"
        f" calendar: {{holidays: {{ics: '{ics}'}}}}}}\n",  # the same file: the same calendar
        encoding="utf-8",
    )
    calendar = load_config(yaml).calendars().for_destination(Platform.CONSOLE, "team", "UTC")
    block = calendar.block(datetime(2026, 10, 5, 8, 30, tzinfo=UTC))
    assert block is not None and block.name == "Planning"
    assert calendar.block(datetime(2026, 10, 5, 9, 30, tzinfo=UTC)) is None


def test_the_icalendar_libraries_load_only_when_a_file_is_read(tmp_path: Path) -> None:
    """A service with no calendar file carries neither library (about 3 MB of its RSS); the
    first file read loads them."""
    path = _write(tmp_path, _calendar(_event("off", date(2026, 12, 24), "Day off")))
    script = (
        "import sys\n"
        "import bot.cli, bot.service.app, bot.scheduling.tick, bot.settings\n"
        "libraries = ('icalendar', 'recurring_ical_events')\n"
        "print(sorted(m for m in libraries if m in sys.modules))\n"
        "from datetime import date\n"
        "from bot.core.calendar import load_ics\n"
        "from pathlib import Path\n"
        f"found = load_ics(Path({str(path)!r}), date(2026, 12, 1)).holiday(date(2026, 12, 24))\n"
        "assert found == 'Day off', found\n"
        "print(sorted(m for m in libraries if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[]", "['icalendar', 'recurring_ical_events']"]
