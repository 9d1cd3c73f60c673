"""Schedules follow crontab(5): its day-of-week numbering, its day rule, and what cron does on
DST days (bot/core/timing/cron.py's conventions, docs/calendar.md)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.core.timing.cron import CronError, next_fire, previous_fire

NEW_YORK = ZoneInfo("America/New_York")
BERLIN = ZoneInfo("Europe/Berlin")
SUNDAY = datetime(2026, 3, 1, tzinfo=UTC)  # 2026-03-01 is a Sunday


def fires(expr: str, zone: ZoneInfo, after: datetime, count: int) -> list[datetime]:
    found, cursor = [], after
    for _ in range(count):
        fire = next_fire(expr, str(zone), cursor)
        found.append(fire)
        cursor = fire.astimezone(UTC) + timedelta(seconds=1)  # in UTC: real time
    return found


def weekdays(expr: str, count: int = 7) -> list[str]:
    return [f"{fire:%a}" for fire in fires(expr, ZoneInfo("UTC"), SUNDAY, count)]


def test_midnight_after_spring_forward_is_the_next_day_not_the_one_after() -> None:
    after = datetime(2026, 3, 8, 0, 0, 1, tzinfo=NEW_YORK)
    assert next_fire("0 0 * * *", "America/New_York", after).isoformat() == (
        "2026-03-09T00:00:00-04:00"
    )


def test_the_first_of_the_month_after_spring_forward_is_not_skipped() -> None:
    after = datetime(2026, 3, 2, tzinfo=BERLIN)
    assert [f.date().isoformat() for f in fires("0 0 1 * *", BERLIN, after, 2)] == [
        "2026-04-01",
        "2026-05-01",
    ]


@pytest.mark.parametrize(
    ("dow", "days"),
    [
        ("*/2", ["Sun", "Tue", "Thu", "Sat", "Sun", "Tue", "Thu"]),
        ("1-5/2", ["Mon", "Wed", "Fri", "Mon", "Wed", "Fri", "Mon"]),
        ("0-3", ["Sun", "Mon", "Tue", "Wed", "Sun", "Mon", "Tue"]),
        ("sun-wed", ["Sun", "Mon", "Tue", "Wed", "Sun", "Mon", "Tue"]),
        ("fri-mon", ["Sun", "Mon", "Fri", "Sat", "Sun", "Mon", "Fri"]),
        ("fri-sun", ["Sun", "Fri", "Sat", "Sun", "Fri", "Sat", "Sun"]),
        ("7", ["Sun"] * 7),
        ("0", ["Sun"] * 7),
        ("5-7", ["Sun", "Fri", "Sat", "Sun", "Fri", "Sat", "Sun"]),
    ],
)
def test_the_day_of_week_counts_as_crontab_does(dow: str, days: list[str]) -> None:
    assert weekdays(f"0 9 * * {dow}") == days


def test_hash_names_the_nth_weekday_of_the_month_and_l_the_last() -> None:
    second_mondays = fires("0 9 * * 1#2", ZoneInfo("UTC"), SUNDAY, 3)
    assert [f.date().isoformat() for f in second_mondays] == [
        "2026-03-09",
        "2026-04-13",
        "2026-05-11",
    ]
    last_fridays = fires("0 9 * * 5L", ZoneInfo("UTC"), SUNDAY, 2)
    assert [f.date().isoformat() for f in last_fridays] == ["2026-03-27", "2026-04-24"]
    month_ends = fires("0 9 L * *", ZoneInfo("UTC"), SUNDAY, 2)
    assert [f.date().isoformat() for f in month_ends] == ["2026-03-31", "2026-04-30"]


def test_a_question_mark_is_refused_with_what_to_write() -> None:
    with pytest.raises(CronError, match=r"'\?' is not crontab; write '\*' in the day of month"):
        next_fire("0 9 ? * mon", "UTC", SUNDAY)


def test_day_of_month_or_day_of_week_fires_on_either_when_both_are_restricted() -> None:
    found = [f.date().isoformat() for f in fires("0 9 13 * fri", ZoneInfo("UTC"), SUNDAY, 4)]
    assert found == ["2026-03-06", "2026-03-13", "2026-03-20", "2026-03-27"]


def test_a_leading_star_leaves_the_day_of_month_unrestricted_so_both_must_match() -> None:
    found = [f.date().isoformat() for f in fires("0 9 */2 * mon", ZoneInfo("UTC"), SUNDAY, 2)]
    assert found == ["2026-03-09", "2026-03-23"]  # odd days that are Mondays


def test_every_30_minutes_keeps_the_2am_slot_after_fall_back() -> None:
    after = datetime(2026, 11, 1, 0, 45, tzinfo=NEW_YORK)
    got = [f.isoformat() for f in fires("*/30 * * * *", NEW_YORK, after, 6)]
    assert got == [
        "2026-11-01T01:00:00-04:00",
        "2026-11-01T01:30:00-04:00",
        "2026-11-01T01:00:00-05:00",
        "2026-11-01T01:30:00-05:00",
        "2026-11-01T02:00:00-05:00",
        "2026-11-01T02:30:00-05:00",
    ]


def test_the_catch_up_finds_the_2am_slot_after_fall_back() -> None:
    now = datetime(2026, 11, 1, 2, 0, 10, tzinfo=NEW_YORK)
    found = previous_fire("*/30 * * * *", "America/New_York", now)
    assert found is not None and found.isoformat() == "2026-11-01T02:00:00-05:00"


def test_a_time_inside_the_spring_gap_fires_at_the_first_real_instant_after_it() -> None:
    after = datetime(2026, 3, 7, 12, tzinfo=NEW_YORK)
    got = [f.isoformat() for f in fires("30 2 * * *", NEW_YORK, after, 2)]
    assert got == ["2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"]
    now = datetime(2026, 3, 8, 3, 5, tzinfo=NEW_YORK)
    caught = previous_fire("30 2 * * *", "America/New_York", now)
    assert caught is not None and caught.isoformat() == "2026-03-08T03:00:00-04:00"


def test_a_fixed_time_in_the_repeated_hour_fires_once_at_the_first_pass() -> None:
    after = datetime(2026, 10, 31, 12, tzinfo=NEW_YORK)
    got = [f.isoformat() for f in fires("30 1 * * *", NEW_YORK, after, 2)]
    assert got == ["2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"]


def test_the_catch_up_in_the_second_pass_of_the_repeated_hour_finds_the_first_pass() -> None:
    # 01:45 EST is an hour and a quarter after 01:30 EDT, which fired: it is the latest fire.
    now = datetime(2026, 11, 1, 1, 45, fold=1, tzinfo=NEW_YORK)
    found = previous_fire("30 1 * * *", "America/New_York", now)
    assert found is not None and found.isoformat() == "2026-11-01T01:30:00-04:00"
    later = next_fire("30 1 * * *", "America/New_York", now)
    assert later.isoformat() == "2026-11-02T01:30:00-05:00"
