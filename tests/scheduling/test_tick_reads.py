"""What a tick reads: the subscriptions that may be due, not every one. A subscription whose
runs reached the latest fire of its schedule (under any holiday calendar it may keep) cannot
be due before the next fire, so the tick's pages leave it out; `now` subscriptions, and the
ones still waiting for a fire (held, failed, new), are read as before. The tick still counts
every active destination (the planner's `auto` mode decides by that count)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from bot.core.calendar import CountryHolidays
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import Page, SubscriptionStore
from bot.scheduling.due import latest_possible_fire
from bot.scheduling.tick import DigestTicker
from bot.settings import BotConfig
from tests.kits.delivery import FakeClock, add_reports, channel, setup_destinations

SHANGHAI = ZoneInfo("Asia/Shanghai")
WORKDAYS = "30 9 * * mon-fri"
CN = CountryHolidays("CN")  # 2026-10-10, a Saturday, is a make-up working day


class CountingStore(SubscriptionStore):
    """The subscription store, counting what each tick's pages held."""

    read: list[str]
    destinations: int

    async def active_pages(
        self, destinations_per_page: int, fires: Mapping[tuple[str, str], datetime] | None = None
    ) -> AsyncIterator[Page]:
        self.read, self.destinations = [], 0
        async for page in super().active_pages(destinations_per_page, fires):
            self.read += [sub.name for sub in page.subscriptions]
            self.destinations += page.destinations
            yield page


async def _ticker(
    store: ReportStore, clock: FakeClock, config: BotConfig
) -> tuple[DigestTicker, CountingStore]:
    await setup_destinations(store.engine, *config.channels)
    subs = CountingStore(store.engine)
    return DigestTicker(store.engine, subs, Renderer(), clock, config.calendars()), subs


async def test_a_tick_with_nothing_due_reads_only_the_now_subscriptions(
    store: ReportStore,
) -> None:
    clock = FakeClock(datetime(2026, 9, 1, 9, 0, 5, tzinfo=UTC))
    config = BotConfig(
        channels=[channel("a", "A"), channel("b", "B"), channel("live", "C", schedule="now")]
    )
    ticker, subs = await _ticker(store, clock, config)
    await add_reports(store, [1])
    assert sorted(run.entries for run in await ticker.tick()) == [1, 1, 1]
    assert sorted(subs.read) == ["a", "b", "live"]

    clock.now = datetime(2026, 9, 1, 9, 0, 20, tzinfo=UTC)
    await add_reports(store, [2])
    assert [run.entries for run in await ticker.tick()] == [1], "`live` posts #2 at once"
    assert subs.read == ["live"], "the dailies ran at 09:00: not read until tomorrow's"
    assert (subs.destinations, ticker.destinations) == (3, 3)

    clock.now = datetime(2026, 9, 2, 9, 0, 5, tzinfo=UTC)
    assert sorted(run.entries for run in await ticker.tick()) == [1, 1]  # #2 for a and b
    assert sorted(subs.read) == ["a", "b", "live"]


async def test_a_now_subscription_is_read_only_when_something_is_newer_than_its_watermark(
    store: ReportStore,
) -> None:
    clock = FakeClock(datetime(2026, 9, 1, 10, 0, tzinfo=UTC))
    config = BotConfig(channels=[channel("live", "A", schedule="now", tags=["never-matches"])])
    ticker, subs = await _ticker(store, clock, config)
    await add_reports(store, [1])
    assert await ticker.tick() == []
    assert subs.read == ["live"], "#1 is new to it (it does not match: its watermark moves)"
    clock.advance(15)
    assert await ticker.tick() == []
    assert subs.read == [], "nothing newer than its watermark"
    await add_reports(store, [2])
    clock.advance(15)
    await ticker.tick()
    assert subs.read == ["live"]


async def test_a_missed_fire_held_by_quiet_hours_is_read_until_it_is_planned(
    store: ReportStore,
) -> None:
    """The 21:00 fire was missed (the process was down); back at 23:00, inside the quiet
    hours, it waits for their end, and is read at every tick until then."""
    clock = FakeClock(datetime(2026, 9, 1, 23, 0, 5, tzinfo=UTC))
    config = BotConfig.model_validate(
        {
            "calendar": {"quiet_hours": "22:00-08:00"},
            "channels": [channel("evening", "A", schedule="0 21 * * *")],
        }
    )
    ticker, subs = await _ticker(store, clock, config)
    await add_reports(store, [1])
    assert await ticker.tick() == []
    assert subs.read == ["evening"], "held, not yet planned: still read"
    clock.now = datetime(2026, 9, 2, 8, 0, 5, tzinfo=UTC)
    assert [run.entries for run in await ticker.tick()] == [1]
    clock.now = datetime(2026, 9, 2, 8, 0, 20, tzinfo=UTC)
    assert await ticker.tick() == []
    assert subs.read == [], "planned for 21:00: not read until the next one"


async def test_the_make_up_working_saturday_is_not_left_out(store: ReportStore) -> None:
    """The cron alone last fired on Friday; the holiday calendar makes Saturday a working day,
    so the Friday run does not keep the subscription from being read (and planned)."""
    clock = FakeClock(datetime(2026, 10, 9, 9, 30, 5, tzinfo=SHANGHAI))
    config = BotConfig.model_validate(
        {
            "calendar": {"holidays": {"country": "CN"}},
            "channels": [channel("cn", "A", schedule=WORKDAYS, timezone="Asia/Shanghai")],
        }
    )
    ticker, subs = await _ticker(store, clock, config)
    await add_reports(store, [1])
    assert [run.entries for run in await ticker.tick()] == [1]  # Friday the 9th
    await add_reports(store, [2])
    clock.now = datetime(2026, 10, 10, 9, 30, 5, tzinfo=SHANGHAI)
    assert [run.entries for run in await ticker.tick()] == [1], "the make-up Saturday"
    assert subs.read == ["cn"]
    clock.now = datetime(2026, 10, 11, 9, 30, 5, tzinfo=SHANGHAI)  # an ordinary Sunday
    assert await ticker.tick() == []
    assert subs.read == []


def test_the_latest_possible_fire_is_the_latest_under_any_holiday_calendar() -> None:
    saturday = datetime(2026, 10, 10, 9, 31, tzinfo=SHANGHAI)
    friday_fire = datetime(2026, 10, 9, 9, 30, tzinfo=SHANGHAI)
    saturday_fire = datetime(2026, 10, 10, 9, 30, tzinfo=SHANGHAI)
    assert latest_possible_fire(WORKDAYS, "Asia/Shanghai", saturday, [None]) == friday_fire
    assert latest_possible_fire(WORKDAYS, "Asia/Shanghai", saturday, [None, CN]) == saturday_fire
    assert latest_possible_fire("0 9 31 2 *", "UTC", saturday, [None]) is None  # never fires
