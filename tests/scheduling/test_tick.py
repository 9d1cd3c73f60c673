"""Digest schedules: cron with day names and time zones, DST, catch-up after downtime, and
the working calendar (holidays, days off, quiet hours) holding fires until the next working one."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.adapters.telegram.pace import ChatPacer
from bot.adapters.telegram.sender import TelegramSender
from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.outbox import PG_LANES
from bot.core.digest.select import DigestFilter
from bot.core.models import Platform
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import SubscriptionStore
from bot.core.timing.cron import CronError, next_fire, normalize, previous_fire
from bot.scheduling.due import due_time, longer_than_a_day
from bot.scheduling.tick import DigestTicker
from bot.settings import BotConfig
from tests.fakes.telegram.api import FakeTelegram
from tests.kits.delivery import (
    LONG_AGO,
    FakeClock,
    add_reports,
    channel,
    run_until_idle,
    save_chat,
    setup_destinations,
)

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
        normalize(bad)


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


# The working calendar (issue 18) ---------------------------------------------------------------

SHANGHAI = ZoneInfo("Asia/Shanghai")
GOLDEN_WEEK_CHAT = -100_018
GOLDEN_WEEK = {
    "timezone": "Asia/Shanghai",
    "locale": "en",
    "calendar": {"workdays": ["mon", "tue", "wed", "thu", "fri"], "holidays": {"country": "CN"}},
    "channels": [
        {"name": "team", "platform": "telegram", "target": str(GOLDEN_WEEK_CHAT),
         "cadence": "daily 09:00"},
    ],
}  # fmt: skip


@pytest.fixture
async def telegram(clock: FakeClock) -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(clock=lambda: clock().timestamp()) as server:
        yield server


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 9, 30, 9, 0, 5, tzinfo=SHANGHAI))


async def test_golden_week_sends_nothing_then_one_catch_up_on_october_8(
    store: ReportStore, telegram: FakeTelegram, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="prdigest.scheduler")
    telegram.add_chat(GOLDEN_WEEK_CHAT, "supergroup")
    config = BotConfig.model_validate(GOLDEN_WEEK)
    await SubscriptionStore(store.engine, clock=lambda: LONG_AGO).sync_config(config)
    ticker = DigestTicker(
        store.engine, SubscriptionStore(store.engine), Renderer(), clock, config.calendars()
    )
    sender = TelegramSender(
        telegram.token, telegram.url, ChatPacer(clock=lambda: clock().timestamp())
    )
    deliverer = Deliverer(store.engine, {Platform.TELEGRAM: sender}, "test", clock)
    await add_reports(store, [101])
    start = clock.now
    posted_on: list[str] = []
    for hour in range(8 * 24 + 2):  # every hour, Sep 30 09:00 to Oct 8 10:00 (Shanghai)
        clock.now = start + timedelta(hours=hour)
        if clock.now.astimezone(SHANGHAI).hour == 12:  # one report a day, holidays included
            await add_reports(store, [102 + hour // 24])
        if await ticker.tick():
            posted_on.append(clock.now.astimezone(SHANGHAI).date().isoformat())
            await run_until_idle(deliverer, clock, 3)
    await sender.close()

    assert posted_on == ["2026-09-30", "2026-10-08"]
    first, catch_up = (m.plain_text for m in telegram.sent_to(GOLDEN_WEEK_CHAT))
    assert "#101" in first and "#102" not in first
    assert all(f"#{n}" in catch_up for n in range(102, 110)), "every holiday report, once"
    assert "#101" not in catch_up
    held = [r for r in caplog.records if r.getMessage() == "digest.held_by_calendar"]
    assert len(held) == 7, "logged once a day: Oct 1-3 and 5-7 holidays, Sunday Oct 4 off"


def _local_utc_calendar(**extra: object) -> BotConfig:
    return BotConfig.model_validate(
        {"timezone": "UTC", "calendar": {"quiet_hours": "22:00-08:00", **extra}}
    )


async def test_a_now_subscription_holds_through_quiet_hours_and_posts_once_at_their_end(
    store: ReportStore,
) -> None:
    clock = FakeClock(datetime(2026, 9, 1, 21, 0, tzinfo=UTC))
    config = _local_utc_calendar()
    await save_chat(store.engine, Platform.CONSOLE, "ops", DigestFilter(), schedule="now")
    ticker = DigestTicker(
        store.engine, SubscriptionStore(store.engine), Renderer(), clock, config.calendars()
    )
    await ticker.tick()
    quiet = (datetime(2026, 9, 1, 23, 0, tzinfo=UTC), datetime(2026, 9, 2, 3, 0, tzinfo=UTC))
    for number, moment in enumerate(quiet, start=1):
        clock.now = moment
        await add_reports(store, [number])
        assert await ticker.tick() == [], "nothing inside quiet hours"
    clock.now = datetime(2026, 9, 2, 7, 59, 59, tzinfo=UTC)
    assert await ticker.tick() == []
    clock.now = datetime(2026, 9, 2, 8, 0, 5, tzinfo=UTC)
    assert [run.entries for run in await ticker.tick()] == [2], "one post with both"
    assert await ticker.tick() == []


async def test_a_fire_missed_while_down_is_not_caught_up_inside_quiet_hours(
    store: ReportStore,
) -> None:
    clock = FakeClock(datetime(2026, 9, 1, 9, 0, 5, tzinfo=UTC))
    await setup_destinations(store.engine, channel("a", "A"))
    ticker = DigestTicker(
        store.engine,
        SubscriptionStore(store.engine),
        Renderer(),
        clock,
        _local_utc_calendar().calendars(),
    )
    await add_reports(store, [1])
    assert [r.entries for r in await ticker.tick()] == [1]
    await add_reports(store, [2])
    clock.now = datetime(2026, 9, 2, 23, 0, tzinfo=UTC)  # back after the 09:00 it missed
    assert await ticker.tick() == []
    clock.now = datetime(2026, 9, 3, 8, 0, 5, tzinfo=UTC)  # the first working tick
    assert [r.entries for r in await ticker.tick()] == [1]


def test_a_fire_on_a_holiday_is_not_due_and_the_next_working_one_is() -> None:
    calendar = (
        BotConfig.model_validate(
            {"timezone": "Asia/Shanghai", "calendar": {"holidays": {"country": "CN"}}}
        )
        .calendars()
        .for_destination(Platform.CONSOLE, "stdout", "Asia/Shanghai")
    )

    class Dest:
        schedule = "0 9 * * *"
        timezone = "Asia/Shanghai"
        instant = False

    national_day = datetime(2026, 10, 1, 10, tzinfo=SHANGHAI)
    assert due_time(Dest(), national_day, None, calendar) is None  # type: ignore[arg-type]
    assert due_time(Dest(), national_day, None) is not None  # type: ignore[arg-type]
    october_8 = datetime(2026, 10, 8, 10, tzinfo=SHANGHAI)
    fire = due_time(Dest(), october_8, None, calendar)  # type: ignore[arg-type]
    assert fire == datetime(2026, 10, 8, 9, tzinfo=SHANGHAI)


def test_the_calendars_zone_not_the_crons_decides_which_day_a_fire_falls_on() -> None:
    config = BotConfig.model_validate(
        {
            "timezone": "UTC",
            "calendar": {"timezone": "Asia/Shanghai", "holidays": {"country": "CN"}},
        }
    )
    calendar = config.calendars().for_destination(Platform.CONSOLE, "stdout", "UTC")

    class Dest:
        schedule = "0 17 * * *"  # 17:00 UTC, 01:00 the next day in Shanghai
        timezone = "UTC"
        instant = False

    sept_30_evening = datetime(2026, 9, 30, 17, 30, tzinfo=UTC)  # 1 October in Shanghai
    assert due_time(Dest(), sept_30_evening, None, calendar) is None  # type: ignore[arg-type]
    sept_29_evening = datetime(2026, 9, 29, 17, 30, tzinfo=UTC)  # still 30 September there
    assert due_time(Dest(), sept_29_evening, None, calendar) == datetime(  # type: ignore[arg-type]
        2026, 9, 29, 17, 0, tzinfo=UTC
    )


def test_a_now_subscription_holds_on_a_holiday_until_the_next_working_day_begins() -> None:
    config = BotConfig.model_validate(
        {
            "timezone": "Asia/Shanghai",
            "calendar": {"workdays": ["mon-fri"], "holidays": {"country": "CN"}},
        }
    )
    calendar = config.calendars().for_destination(Platform.CONSOLE, "stdout", "Asia/Shanghai")

    class Dest:
        schedule = "now"
        timezone = "Asia/Shanghai"
        instant = True

    last_holiday_night = datetime(2026, 10, 7, 23, 59, tzinfo=SHANGHAI)
    assert due_time(Dest(), last_holiday_night, None, calendar) is None  # type: ignore[arg-type]
    october_8 = datetime(2026, 10, 8, 0, 0, 10, tzinfo=SHANGHAI)
    assert due_time(Dest(), october_8, None, calendar) == october_8  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("cadence", "weekly"),
    [
        ("0 9 * * *", False),
        ("30 9 * * mon-fri", False),
        ("0 17 * * fri", True),
        ("0 9 1 * *", True),
        ("now", False),
    ],
)
async def test_only_a_cadence_longer_than_a_day_gets_the_weekly_synthesis(
    store: ReportStore, cadence: str, weekly: bool
) -> None:
    [sub] = await setup_destinations(store.engine, channel("w", "W", schedule=cadence))
    fire = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)  # a Friday
    assert longer_than_a_day(sub, fire) is weekly


async def test_a_big_tick_reads_in_pages_and_sums_itself_up_in_one_line(
    store: ReportStore, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("bot.scheduling.tick.TICK_PAGE", 40)  # 120 destinations: three pages
    caplog.set_level(logging.INFO, logger="prdigest.scheduler")
    clock = FakeClock(datetime(2026, 9, 1, 9, 0, 5, tzinfo=UTC))
    chats = [channel(f"c{i}", f"T{i}", repos=["verl-project/verl"]) for i in range(120)]
    await setup_destinations(store.engine, *chats)
    await add_reports(store, [1, 2])
    ticker = DigestTicker(store.engine, SubscriptionStore(store.engine), Renderer(), clock)
    planned = await ticker.tick()
    assert len(planned) == 120 and all(run.created for run in planned)
    [summary] = [r for r in caplog.records if r.getMessage() == "digest.tick_planned"]
    fields = summary.__dict__["fields"]
    # One audience: rendered once, or once per lane where batches are planned at once (two
    # PostgreSQL lanes may each render it before either has committed its edition).
    assert fields["runs"] == 120 and 1 <= fields["editions"] <= PG_LANES
    assert fields["messages"] == sum(run.messages for run in planned)
    assert await ticker.tick() == []
