"""A new subscription's first digest is what a person expects: nothing caught up from before
the day it was made (a weekly made on Monday does not post last Friday's digest), one window
of its cadence (the reports stored since its previous fire, not the store's whole history),
saying so in its header; its header names
the destination by its `title:`, or the repo it follows, never the subscriptions' names."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.core.delivery.deliverer import Deliverer
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import SubscriptionStore
from bot.scheduling.tick import DigestTicker
from tests.kits.delivery import (
    FakeClock,
    ScriptedSender,
    channel,
    report,
    run_until_idle,
    setup_destinations,
)

MONDAY_0929 = datetime(2026, 12, 7, 9, 29, tzinfo=UTC)  # the first start after install
WEEKLY = "0 17 * * fri"
DAILY = "0 9 * * *"


async def _ticker(store: ReportStore, clock: FakeClock, *channels: object) -> DigestTicker:
    await setup_destinations(store.engine, *channels, made_at=clock.now)  # type: ignore[arg-type]
    return DigestTicker(store.engine, SubscriptionStore(store.engine), Renderer(), clock)


async def _stored(store: ReportStore, number: int, when: datetime) -> None:
    """Report `number`, stored at `when`."""
    await ReportStore(store.engine, clock=lambda: when).upsert(report(number), source="")


async def _texts(store: ReportStore, clock: FakeClock) -> list[str]:
    sender = ScriptedSender(clock)
    await run_until_idle(Deliverer(store.engine, {sender.platform: sender}, "w", clock), clock, 5)
    return [str(call.payload["text"]) for call in sender.calls]


async def test_a_weekly_made_on_monday_waits_for_friday(store: ReportStore) -> None:
    clock = FakeClock(MONDAY_0929)
    ticker = await _ticker(store, clock, channel("rl-weekly", "C1", schedule=WEEKLY))
    await _stored(store, 1, MONDAY_0929 - timedelta(days=1))
    assert await ticker.tick() == [], "last Friday's weekly predates it"
    clock.now = datetime(2026, 12, 11, 17, 0, 5, tzinfo=UTC)
    [friday] = await ticker.tick()
    assert friday.created and friday.entries == 1


async def test_a_daily_made_after_its_hour_still_gets_todays(store: ReportStore) -> None:
    clock = FakeClock(MONDAY_0929)
    ticker = await _ticker(store, clock, channel("rl-daily", "C1", schedule=DAILY))
    await _stored(store, 1, MONDAY_0929 - timedelta(hours=2))
    [today] = await ticker.tick()
    assert today.created and today.entries == 1


async def test_the_first_digest_covers_one_window_and_says_so(store: ReportStore) -> None:
    clock = FakeClock(MONDAY_0929)
    ticker = await _ticker(store, clock, channel("rl-daily", "C1", schedule=DAILY, locale="en"))
    await _stored(store, 1, MONDAY_0929 - timedelta(days=40))  # history the store holds
    await _stored(store, 2, MONDAY_0929 - timedelta(days=3))
    await _stored(store, 3, MONDAY_0929 - timedelta(hours=20))  # since Sunday 09:00
    [first] = await ticker.tick()
    assert first.entries == 1
    [text] = await _texts(store, clock)
    assert "#3 " in text and "#1 " not in text and "#2 " not in text
    assert "1 PR · first digest: reports since 12-06 09:00" in text, text

    await _stored(store, 4, MONDAY_0929)
    clock.now = MONDAY_0929 + timedelta(days=1)
    [second] = await ticker.tick()
    [text] = await _texts(store, clock)
    assert second.entries == 1 and "#4 " in text and "first digest" not in text


async def test_the_header_names_the_destination_not_the_subscriptions(
    store: ReportStore,
) -> None:
    clock = FakeClock(MONDAY_0929 - timedelta(minutes=29))
    ticker = await _ticker(
        store,
        clock,
        channel("rl-daily", "C1", schedule=DAILY, locale="en", title="RL team"),
        channel("rl-also", "C1", schedule=DAILY, locale="en", tags=["fix"]),
        channel("plain", "C2", schedule=DAILY, locale="en"),
    )
    await _stored(store, 1, clock.now - timedelta(hours=1))
    assert len(await ticker.tick()) == 2
    headers = sorted(text.splitlines()[0] for text in await _texts(store, clock))
    day = clock.now.date().isoformat()
    assert headers == [f"RL team · tag view · {day}", f"verl-project/verl · tag view · {day}"]


async def test_a_weekly_header_shows_its_week_not_one_day(store: ReportStore) -> None:
    clock = FakeClock(datetime(2026, 12, 11, 17, 0, 5, tzinfo=UTC))  # a Friday
    weekly = channel("rl-weekly", "C1", schedule=WEEKLY, locale="en")
    await setup_destinations(store.engine, weekly)  # made long ago
    ticker = DigestTicker(store.engine, SubscriptionStore(store.engine), Renderer(), clock)
    await _stored(store, 1, clock.now - timedelta(days=2))
    [run] = await ticker.tick()
    [text] = await _texts(store, clock)
    assert run.entries == 1
    assert text.splitlines()[0] == "verl-project/verl · tag view · 2026-12-04 – 2026-12-11"
