"""Cadences as users type them: every form, every error word for word, and fire times in a
zone across its DST changes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.core.timing.cadence import Cadence, CadenceError, parse_cadence
from bot.core.timing.cron import next_fire

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def read(text: str) -> Cadence:
    return parse_cadence(text, next_fire=next_fire, now=NOW)


def refusal(text: str) -> str:
    with pytest.raises(CadenceError) as caught:
        read(text)
    return str(caught.value)


@pytest.mark.parametrize(
    ("text", "cron", "canonical"),
    [
        ("0 9 * * mon-fri", "0 9 * * mon-fri", "0 9 * * mon-fri"),
        ("  0  9 * *   MON-FRI ", "0 9 * * mon-fri", "0 9 * * mon-fri"),
        ("daily 09:00", "0 9 * * *", "daily 09:00"),
        ("daily 9:00", "0 9 * * *", "daily 09:00"),
        ("Daily 23:59", "59 23 * * *", "daily 23:59"),
        ("daily 00:00", "0 0 * * *", "daily 00:00"),
        ("workdays 09:30", "30 9 * * mon-fri", "workdays 09:30"),
        ("weekly fri 17:00", "0 17 * * fri", "weekly fri 17:00"),
        ("weekly FRI 17:00", "0 17 * * fri", "weekly fri 17:00"),
        ("weekly friday 17:00", "0 17 * * fri", "weekly fri 17:00"),
        ("weekly Sunday 8:05", "5 8 * * sun", "weekly sun 08:05"),
        ("weekly mon 06:00", "0 6 * * mon", "weekly mon 06:00"),
        ("09:00", "0 9 * * *", "09:00"),  # as `schedule:` and `/schedule` read a clock time
        ("09:00 MON-FRI", "0 9 * * mon-fri", "09:00 mon-fri"),
    ],
)
def test_a_cron_cadence_means_one_cron_and_is_written_back_canonically(
    text: str, cron: str, canonical: str
) -> None:
    cadence = read(text)
    assert (cadence.kind, cadence.cron, cadence.text) == ("cron", cron, canonical)


@pytest.mark.parametrize("text", ["now", "NOW", " now "])
def test_now_has_no_cron_and_no_fire_time(text: str) -> None:
    cadence = read(text)
    assert (cadence.kind, cadence.cron, cadence.text) == ("now", None, "now")
    assert cadence.next_fire(NOW, "Europe/Berlin") is None


def test_a_shorthand_and_its_cron_are_the_same_schedule() -> None:
    assert read("daily 09:00").cron == read("0 9 * * *").cron
    assert read("daily 09:00") != read("0 9 * * *")  # written differently, echoed as written


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "hourly",
            "cadence: 'hourly' is not a cadence (use a cron like '0 9 * * mon-fri', "
            "'daily 09:00', 'workdays 09:30', 'weekly fri 17:00' or 'now')",
        ),
        (
            "",
            "cadence: '' is not a cadence (use a cron like '0 9 * * mon-fri', "
            "'daily 09:00', 'workdays 09:30', 'weekly fri 17:00' or 'now')",
        ),
        (
            "0 9 * *",
            "cadence: '0 9 * *' is not a cadence (use a cron like '0 9 * * mon-fri', "
            "'daily 09:00', 'workdays 09:30', 'weekly fri 17:00' or 'now')",
        ),
        ("weekly fir 17:00", "cadence: unknown day 'fir' (did you mean fri?)"),
        ("weekly Thurs 10:00", "cadence: unknown day 'Thurs' (did you mean thu?)"),
        ("weekly xyz 10:00", "cadence: unknown day 'xyz' (use mon, tue, wed, thu, fri, sat, sun)"),
        ("daily 25:00", "cadence: bad time '25:00' (use HH:MM, 00:00-23:59)"),
        ("workdays 9am", "cadence: bad time '9am' (use HH:MM, 00:00-23:59)"),
        ("weekly fri 17:60", "cadence: bad time '17:60' (use HH:MM, 00:00-23:59)"),
        ("daily", "cadence: 'daily' is written 'daily HH:MM', e.g. 'daily 09:00'"),
        (
            "workdays mon 09:00",
            "cadence: 'workdays mon 09:00' is written 'workdays HH:MM', e.g. 'workdays 09:30'",
        ),
        (
            "weekly 17:00",
            "cadence: 'weekly 17:00' is written 'weekly DAY HH:MM', e.g. 'weekly fri 17:00'",
        ),
        ("now please", "cadence: 'now please' is written 'now'"),
        (
            "0 9 31 2 *",
            "cadence: cron '0 9 31 2 *' never fires within a year: no date matches it (e.g. "
            "February has no day 30 or 31, and a 29th only once in four years)",
        ),
        (
            "0 9 * * 8",
            "cadence: cron '0 9 * * 8': bad day of week '8' (use 0-7 or sun-sat (0 and 7 are"
            " Sunday), e.g. mon-fri, fri-mon, */2, 1#2 (the second Monday), 5L (the last Friday))",
        ),
        (
            "0 9 * * ?",
            "cadence: cron '0 9 * * ?': '?' is not crontab; write '*' in the day of week",
        ),
    ],
)
def test_a_bad_cadence_says_what_was_wrong_and_how_to_write_it(text: str, message: str) -> None:
    assert refusal(text) == message


def test_a_cron_the_engine_refuses_is_a_cadence_error() -> None:
    assert refusal("61 9 * * *").startswith("cadence: cron '61 9 * * *': ")


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.mark.parametrize(
    ("text", "tz", "after", "fire"),
    [
        # Berlin springs forward on 2026-03-29: 09:00 is 08:00 UTC, then 07:00 UTC
        ("daily 09:00", "Europe/Berlin", "2026-03-28T08:30+00:00", "2026-03-29T07:00+00:00"),
        ("daily 09:00", "Europe/Berlin", "2026-03-27T12:00+00:00", "2026-03-28T08:00+00:00"),
        # New York springs forward on 2026-03-08 (a Sunday): Friday after 09:30 -> Monday EDT
        ("workdays 09:30", "America/New_York", "2026-03-06T15:00+00:00", "2026-03-09T13:30+00:00"),
        # Berlin falls back on 2026-10-25: Friday 17:00 CEST is 15:00 UTC, then CET 16:00 UTC
        ("weekly fri 17:00", "Europe/Berlin", "2026-10-23T15:00+00:00", "2026-10-23T15:00+00:00"),
        (
            "weekly friday 17:00",
            "Europe/Berlin",
            "2026-10-23T16:00+00:00",
            "2026-10-30T16:00+00:00",
        ),
        ("0 9 * * mon-fri", "Europe/Berlin", "2026-10-24T00:00+00:00", "2026-10-26T08:00+00:00"),
    ],
)
def test_the_next_fire_is_the_wall_clock_time_in_the_zone_across_dst(
    text: str, tz: str, after: str, fire: str
) -> None:
    assert read(text).next_fire(_at(after), tz) == _at(fire)
