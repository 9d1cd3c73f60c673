"""Several subscriptions in one destination (issue 17): each fires on its own cadence, those due
in the same tick share one digest where a PR shows once (`matched: a, b`), a `now` subscription
posts within a tick of ingestion and later digests refer to that post, and every outbox
guarantee holds per subscription."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select

from bot.core.delivery.deliverer import Deliverer
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.sql.tables import digest_runs, run_members
from bot.core.store.subscriptions import SubscriptionStore
from bot.scheduling.tick import DigestTicker
from tests.kits.delivery import (
    FakeClock,
    ScriptedSender,
    add_reports,
    channel,
    run_until_idle,
    setup_destinations,
)

THURSDAY = datetime(2026, 9, 3, 9, 0, 5, tzinfo=UTC)
FRIDAY = THURSDAY + timedelta(days=1)


def _texts(sender: ScriptedSender) -> list[str]:
    return [str(call.payload["text"]) for call in sender.calls]


async def _setup(store: ReportStore, clock: FakeClock, *channels: object) -> DigestTicker:
    await setup_destinations(store.engine, *channels)  # type: ignore[arg-type]
    return DigestTicker(store.engine, SubscriptionStore(store.engine), Renderer(), clock)


async def _deliver(store: ReportStore, sender: ScriptedSender, clock: FakeClock) -> None:
    deliverer = Deliverer(store.engine, {sender.platform: sender}, "w", clock)
    await run_until_idle(deliverer, clock, 30)


async def _daily_and_release_watch(store: ReportStore, clock: FakeClock) -> DigestTicker:
    """A daily at 09:00 and a `now` route for breaking PRs, on one channel."""
    return await _setup(
        store,
        clock,
        channel("daily", "C1", schedule="0 9 * * *"),
        channel("release-watch", "C1", schedule="now", query="tag:breaking"),
    )


async def test_daily_and_weekly_on_one_channel_both_arrive_and_a_shared_pr_shows_once(
    store: ReportStore,
) -> None:
    clock = FakeClock(THURSDAY)
    ticker = await _setup(
        store,
        clock,
        channel("daily", "C1", schedule="0 9 * * *"),
        channel("weekly", "C1", schedule="0 9 * * fri", tags=["breaking"]),
    )
    clock.now = THURSDAY - timedelta(days=1)  # a first start: both run their catch-up, empty
    assert [(r.created, r.entries) for r in await ticker.tick()] == [(True, 0)]
    clock.now = THURSDAY
    await add_reports(store, [1], tags=["breaking"])
    await add_reports(store, [2], tags=["rollout"])
    thursday = await ticker.tick()  # only the daily is due
    assert [(r.created, r.entries) for r in thursday] == [(True, 2)]
    sender = ScriptedSender(clock)
    await _deliver(store, sender, clock)
    [daily] = _texts(sender)
    assert daily.startswith("verl-project/verl · tag view") and "matched" not in daily

    await add_reports(store, [3], tags=["breaking"])
    clock.now = FRIDAY
    friday = await ticker.tick()  # both due at 09:00: one run, one digest
    assert [(r.created, r.entries) for r in friday] == [(True, 2)]
    sender.calls.clear()
    await _deliver(store, sender, clock)
    [both] = _texts(sender)
    # the header names what the chat reads (the one repo), the matched-by lines the names
    assert both.startswith("verl-project/verl · tag view") and "daily · weekly" not in both
    entries = [line for line in both.splitlines() if line.startswith(("#", "★ #"))]
    assert sum(1 for line in entries if "#3 " in line) == 1, "an entry once (the synthesis aside)"
    assert "matched: daily, weekly" in both
    assert "== Synthesis ==" in both, "the weekly subscription's run carries the synthesis"
    assert "#1 " in both and "matched: weekly" in both  # the week's breaking PR, for weekly
    assert "#2 " not in both  # the daily sent it yesterday; weekly does not want it
    async with store.engine.connect() as conn:
        runs = (await conn.execute(select(func.count()).select_from(digest_runs))).scalar()
        members = (await conn.execute(select(func.count()).select_from(run_members))).scalar()
    assert (runs, members) == (3, 5)
    subs = {s.name: s.watermark for s in await SubscriptionStore(store.engine).all()}
    assert subs == {"daily": 3, "weekly": 3}
    assert await ticker.tick() == []


async def test_a_now_subscription_posts_within_a_tick_and_the_digest_refers_to_it(
    store: ReportStore,
) -> None:
    clock = FakeClock(THURSDAY - timedelta(hours=2))
    ticker = await _daily_and_release_watch(store, clock)
    [catch_up] = await ticker.tick()  # the daily's catch-up; nothing new for `now`: no run
    assert catch_up.entries == 0
    await add_reports(store, [1], tags=["breaking"])
    await add_reports(store, [2], tags=["rollout"])
    clock.advance(15)  # the next tick
    [instant] = await ticker.tick()
    assert (instant.created, instant.entries) == (True, 1)
    clock.advance(15)
    assert await ticker.tick() == []  # posted once
    sender = ScriptedSender(clock)
    await _deliver(store, sender, clock)
    [post] = _texts(sender)
    assert "#1 " in post and "#2 " not in post

    clock.now = THURSDAY
    [digest] = await ticker.tick()
    assert digest.entries == 2
    sender.calls.clear()
    await _deliver(store, sender, clock)
    [text] = _texts(sender)
    assert "#1 [breaking] fix: change number 1 · posted 07:" in text  # a reference, not again
    assert "one-liner 1" not in text and "one-liner 2" in text


async def test_replicas_ticking_together_plan_each_subscription_once(store: ReportStore) -> None:
    clock = FakeClock(FRIDAY)
    chans = (
        channel("daily", "C1", schedule="0 9 * * *"),
        channel("weekly", "C1", schedule="0 9 * * fri"),
        channel("other", "C2", schedule="0 9 * * *"),
    )
    one = await _setup(store, clock, *chans)
    other = DigestTicker(store.engine, SubscriptionStore(store.engine), Renderer(), clock)
    await add_reports(store, [1, 2])
    first = await one.tick()
    second = await other.tick()
    assert sorted(r.entries for r in first if r.created) == [2, 2]
    assert not any(r.created for r in second)
    async with store.engine.connect() as conn:
        per_sub = (
            await conn.execute(
                select(run_members.c.subscription_id, func.count()).group_by(
                    run_members.c.subscription_id
                )
            )
        ).all()
    assert sorted(n for _, n in per_sub) == [1, 1, 1]


async def test_a_digest_whose_every_pr_the_now_route_posted_is_not_sent(
    store: ReportStore,
) -> None:
    clock = FakeClock(THURSDAY - timedelta(hours=2))
    ticker = await _daily_and_release_watch(store, clock)
    await ticker.tick()  # the daily's catch-up, empty
    await add_reports(store, [1], tags=["breaking"])
    clock.advance(15)
    await ticker.tick()  # the `now` post
    sender = ScriptedSender(clock)
    await _deliver(store, sender, clock)
    assert len(sender.calls) == 1

    clock.now = THURSDAY
    await ticker.tick()  # the daily: its only PR was posted at 07:15
    sender.calls.clear()
    await _deliver(store, sender, clock)
    assert sender.calls == [], _texts(sender)
    assert await ticker.tick() == [], "the daily ran: nothing is left to post later"
