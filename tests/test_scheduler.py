"""Digest schedules: cron with day names and time zones, DST, catch-up after downtime."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import SubscriptionStore
from bot.cron import CronError, next_fire, previous_fire, trigger
from bot.scheduler import DigestTicker, due_time
from tests.kits.delivery import FakeClock, add_reports, channel, setup_destinations

BERLIN = ZoneInfo("Europe/Berlin")


def _fires_per_local_day(expr: str, tz: str, start: datetime, days: int) -> Counter[str]:
    """Walk a fake clock in 1-minute steps, firing whatever is due, like the tick does."""
    fires: Counter[str] = Counter()
    last: datetime | None = None
    now = start
    while now < start + timedelta(days=days):
        fire = previous_fire(expr, tz, now)
        if fire is not None and (last is None or fire > last):
            if last is not None:  # the first one is the catch-up of the day before the walk
                fires[fire.astimezone(ZoneInfo(tz)).date().isoformat()] += 1
            last = fire
        now += timedelta(minutes=1)
    return fires


@pytest.mark.parametrize(
    ("label", "start"),
    [
        ("spring forward", datetime(2026, 3, 27, 12, tzinfo=UTC)),
        ("fall back", datetime(2026, 10, 23, 12, tzinfo=UTC)),
    ],
)
def test_a_0230_berlin_schedule_fires_once_on_dst_days(label: str, start: datetime) -> None:
    fires = _fires_per_local_day("30 2 * * *", "Europe/Berlin", start, days=4)
    assert set(fires.values()) == {1}, f"{label}: {fires}"
    assert len(fires) == 4


def test_day_names_and_crontab_weekday_numbers_mean_the_same_days() -> None:
    after = datetime(2026, 9, 5, 12, tzinfo=UTC)  # a Saturday
    by_name = next_fire("0 9 * * mon-fri", "Asia/Shanghai", after)
    by_number = next_fire("0 9 * * 1-5", "Asia/Shanghai", after)
    sunday = next_fire("0 9 * * 0", "UTC", after)
    assert by_name == by_number
    assert by_name is not None and by_name.astimezone(ZoneInfo("Asia/Shanghai")).weekday() == 0
    assert sunday is not None and sunday.weekday() == 6


@pytest.mark.parametrize("bad", ["0 9 * *", "61 9 * * *", "0 9 * * 8", "0 9 * * funday"])
def test_bad_cron_is_a_clear_error(bad: str) -> None:
    with pytest.raises(CronError, match=r"cron|day of week"):
        trigger(bad, "UTC")


def test_a_destination_that_already_ran_is_not_due_again() -> None:
    now = datetime(2026, 9, 1, 9, 30, tzinfo=UTC)
    fired = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)

    class Dest:
        schedule = "0 9 * * *"
        timezone = "UTC"
        instant = False

    assert due_time(Dest(), now, None) == fired  # type: ignore[arg-type]
    assert due_time(Dest(), now, fired) is None  # type: ignore[arg-type]


async def test_three_missed_days_coalesce_into_one_catch_up(store: ReportStore) -> None:
    clock = FakeClock(datetime(2026, 9, 1, 9, 0, 5, tzinfo=UTC))
    await setup_destinations(store.engine, channel("a", "A"))
    ticker = DigestTicker(store.engine, SubscriptionStore(store.engine), Renderer(), clock)
    await add_reports(store, [1])
    first = await ticker.tick()
    assert [r.entries for r in first] == [1]
    await add_reports(store, [2, 3, 4])  # arrive while the process is down
    clock.now = datetime(2026, 9, 4, 10, 0, tzinfo=UTC)  # back 3 days later
    caught_up = await ticker.tick()
    assert [r.entries for r in caught_up] == [3]
    assert await ticker.tick() == [], "nothing more until the next 09:00"


async def test_a_second_replica_ticking_the_same_time_plans_nothing(store: ReportStore) -> None:
    clock = FakeClock(datetime(2026, 9, 1, 9, 0, 5, tzinfo=UTC))
    await setup_destinations(store.engine, channel("a", "A"))
    await add_reports(store, [1])
    one = DigestTicker(store.engine, SubscriptionStore(store.engine), Renderer(), clock)
    other = DigestTicker(store.engine, SubscriptionStore(store.engine), Renderer(), clock)
    assert [r.created for r in await one.tick()] == [True]
    assert await other.tick() == []


def test_a_six_field_cron_is_refused() -> None:
    with pytest.raises(CronError, match="needs 5 fields"):
        next_fire("*/20 * * * * *", "UTC", datetime(2026, 9, 1, 9, 0, 1, tzinfo=UTC))
