"""Urgent routes: a subscription with `urgent: true` is not held by its destination's quiet
hours, while the other subscriptions of the same destination still wait for their end; the
holidays hold it too, unless it says `holidays: false`."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.sql.tables import digest_runs, run_members, subscriptions
from bot.core.store.subscriptions import SubscriptionStore
from bot.scheduling.tick import DigestTicker
from bot.settings import BotConfig
from tests.kits.delivery import FakeClock, add_reports, setup_destinations

QUIET: dict[str, object] = {"quiet_hours": "22:00-08:00"}
CHRISTMAS: dict[str, object] = {
    **QUIET,
    "holidays": {"country": "US"},
}  # 2026-12-25, a Friday, in UTC here


def _channel(name: str, schedule: str, **extra: object) -> dict[str, object]:
    values = {"name": name, "platform": "console", "target": "ops", "schedule": schedule}
    return {**values, "timezone": "UTC", "locale": "en", **extra}


def _config(calendar: dict[str, object], **breaking: object) -> BotConfig:
    """One destination `ops`: `breaking` (a `now` route, urgent) and `all` (a `now` route)."""
    return BotConfig.model_validate(
        {
            "timezone": "UTC",
            "calendar": calendar,
            "channels": [
                _channel("breaking", "now", urgent=True, **breaking),
                _channel("all", "now"),
            ],
        }
    )


async def _ticker(store: ReportStore, config: BotConfig, clock: FakeClock) -> DigestTicker:
    await setup_destinations(store.engine, *config.channels)
    subs = SubscriptionStore(store.engine)
    return DigestTicker(store.engine, subs, Renderer(), clock, config.calendars())


async def _served(store: ReportStore) -> list[tuple[str, datetime]]:
    """Who each run served, and when it was planned for, in order."""
    query = (
        select(subscriptions.c.name, digest_runs.c.scheduled_for)
        .join(run_members, run_members.c.subscription_id == subscriptions.c.id)
        .join(digest_runs, digest_runs.c.id == run_members.c.run_id)
        .order_by(digest_runs.c.scheduled_for, subscriptions.c.name)
    )
    async with store.engine.connect() as conn:
        return [(row.name, row.scheduled_for) for row in (await conn.execute(query)).all()]


async def test_an_urgent_now_route_speaks_in_quiet_hours_while_its_neighbour_waits(
    store: ReportStore,
) -> None:
    clock = FakeClock(datetime(2026, 9, 1, 21, 0, tzinfo=UTC))
    ticker = await _ticker(store, _config(QUIET), clock)
    await ticker.tick()
    eleven = datetime(2026, 9, 1, 23, 0, tzinfo=UTC)
    clock.now = eleven
    await add_reports(store, [1])
    assert [run.entries for run in await ticker.tick()] == [1], "the urgent route, at once"
    assert await _served(store) == [("breaking", eleven)]
    clock.now = datetime(2026, 9, 2, 3, 0, tzinfo=UTC)
    await add_reports(store, [2])
    assert [run.entries for run in await ticker.tick()] == [1], "only what is new to it"
    assert [name for name, _ in await _served(store)] == ["breaking", "breaking"]
    clock.now = datetime(2026, 9, 2, 7, 59, 59, tzinfo=UTC)
    assert await ticker.tick() == [], "`all` still waits, and `breaking` has nothing new"
    eight = datetime(2026, 9, 2, 8, 0, 5, tzinfo=UTC)
    clock.now = eight
    assert [run.entries for run in await ticker.tick()] == [2], "`all` posts what it held"
    assert (await _served(store))[-1] == ("all", eight)


async def test_a_holiday_holds_an_urgent_route_until_it_ends(store: ReportStore) -> None:
    clock = FakeClock(datetime(2026, 12, 24, 12, 0, tzinfo=UTC))
    ticker = await _ticker(store, _config(CHRISTMAS), clock)
    await ticker.tick()
    clock.now = datetime(2026, 12, 25, 23, 0, tzinfo=UTC)  # Christmas, inside quiet hours
    await add_reports(store, [1])
    assert await ticker.tick() == [], "the holiday holds the urgent route"
    midnight = datetime(2026, 12, 26, 0, 0, 5, tzinfo=UTC)  # no holiday, still quiet hours
    clock.now = midnight
    assert [run.entries for run in await ticker.tick()] == [1]
    assert await _served(store) == [("breaking", midnight)]


async def test_holidays_false_lets_an_urgent_route_speak_on_a_holiday(store: ReportStore) -> None:
    clock = FakeClock(datetime(2026, 12, 24, 12, 0, tzinfo=UTC))
    ticker = await _ticker(store, _config(CHRISTMAS, holidays=False), clock)
    await ticker.tick()
    christmas_night = datetime(2026, 12, 25, 23, 0, tzinfo=UTC)
    clock.now = christmas_night
    await add_reports(store, [1])
    assert [run.entries for run in await ticker.tick()] == [1]
    assert await _served(store) == [("breaking", christmas_night)]
    clock.now = datetime(2026, 12, 26, 8, 0, 5, tzinfo=UTC)
    assert [run.entries for run in await ticker.tick()] == [1], "`all` at the end of both"
    assert [name for name, _ in await _served(store)] == ["breaking", "all"]


async def test_a_scheduled_urgent_route_fires_inside_quiet_hours(store: ReportStore) -> None:
    config = BotConfig.model_validate(
        {
            "timezone": "UTC",
            "calendar": QUIET,
            "channels": [
                _channel("nightly", "0 23 * * *", urgent=True),
                _channel("daily", "0 23 * * *"),
            ],
        }
    )
    clock = FakeClock(datetime(2026, 9, 1, 23, 0, 5, tzinfo=UTC))
    ticker = await _ticker(store, config, clock)
    await add_reports(store, [1])
    assert [run.entries for run in await ticker.tick()] == [1]
    fire = datetime(2026, 9, 1, 23, 0, tzinfo=UTC)
    assert await _served(store) == [("nightly", fire)], "the other fire is held, not sent"
