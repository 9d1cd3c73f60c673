"""Retention (issue 14): old digest runs and inbound-event keys are pruned in batches, on SQLite
and PostgreSQL; what the scheduler, the status and the outbox still need stays."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.render.renderer import Renderer
from bot.core.store.dedupe import KEEP_FOR, first_time, forget_older_than
from bot.core.store.editions import EditionContent, EditionMessage, fill_editions, new_editions
from bot.core.store.prune import RUN_RETENTION, Pruned, prune, prune_runs
from bot.core.store.reports import ReportStore
from bot.core.store.runs import last_run
from bot.core.store.sql.tables import (
    digest_runs,
    edition_messages,
    editions,
    outbox,
    processed_events,
    run_members,
)
from bot.core.store.statuses import RunStatus
from bot.core.store.subscriptions import Subscription, SubscriptionStore
from bot.scheduling.tick import PRUNE_EVERY, DigestTicker
from tests.kits.delivery import FakeClock, channel, setup_destinations

NOW = datetime(2026, 9, 1, 9, 30, tzinfo=UTC)
DAY = timedelta(days=1)


async def _run(
    engine: AsyncEngine,
    sub: Subscription,
    age: timedelta,
    status: str = "empty",
    rows: tuple[str, ...] = (),
) -> int:
    """A digest run scheduled `age` before NOW, with one outbox row per status in `rows`."""
    when = NOW - age
    async with engine.begin() as conn:
        run_id = (
            await conn.execute(
                digest_runs.insert()
                .values(
                    destination_id=sub.destination_id,
                    scheduled_for=when,
                    created_at=when,
                    from_seq=0,
                    to_seq=0,
                    entries=0,
                    messages=len(rows),
                    status=status,
                    finished_at=None if status == "pending" else when,
                )
                .returning(digest_runs.c.id)
            )
        ).scalar_one()
        await conn.execute(
            run_members.insert().values(
                run_id=run_id, subscription_id=sub.id, scheduled_for=when, from_seq=0, to_seq=0
            )
        )
        for part, row_status in enumerate(rows):
            await conn.execute(
                outbox.insert().values(
                    run_id=run_id,
                    destination_id=sub.destination_id,
                    part=part,
                    payload={"text": "x"},
                    status=row_status,
                    attempts=1,
                    next_attempt_at=when,
                    created_at=when,
                )
            )
    return int(run_id)


async def _run_ids(engine: AsyncEngine) -> set[int]:
    async with engine.connect() as conn:
        return set((await conn.execute(select(digest_runs.c.id))).scalars())


async def _outbox_count(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int((await conn.execute(select(func.count()).select_from(outbox))).scalar_one())


async def _member_runs(engine: AsyncEngine) -> set[int]:
    async with engine.connect() as conn:
        return {int(i) for i in (await conn.execute(select(run_members.c.run_id))).scalars()}


async def test_old_runs_go_but_what_is_still_needed_stays(store: ReportStore) -> None:
    engine = store.engine
    a, b = await setup_destinations(engine, channel("a", "A"), channel("b", "B"))
    old_empty = await _run(engine, a, 40 * DAY)
    old_sent = await _run(engine, a, 35 * DAY, "partial", ("sent", "failed"))
    still_queued = await _run(engine, a, 33 * DAY, "pending", ("sent", "pending"))
    still_sending = await _run(engine, a, 32 * DAY, "delivered", ("sending",))
    recent = await _run(engine, a, RUN_RETENTION - DAY)
    only_one = await _run(engine, b, 60 * DAY, "delivered", ("sent",))
    pruned = await prune(engine, NOW)
    assert pruned.runs == 2
    assert await _run_ids(engine) == {still_queued, still_sending, recent, only_one}
    assert old_empty not in await _run_ids(engine) and old_sent not in await _run_ids(engine)
    assert await _outbox_count(engine) == 4  # the pruned run's two rows went with it
    assert await _member_runs(engine) == await _run_ids(engine)  # and its members (no cascade)
    latest_b = await last_run(engine, b.id)
    assert latest_b is not None and latest_b.scheduled_for == NOW - 60 * DAY
    assert latest_b.status is RunStatus.DELIVERED
    assert await prune(engine, NOW) == Pruned(runs=0, events=0)


async def test_runs_are_pruned_in_batches(store: ReportStore) -> None:
    engine = store.engine
    [a] = await setup_destinations(engine, channel("a", "A"))
    for index in range(25):
        await _run(engine, a, RUN_RETENTION + (index + 2) * timedelta(hours=1))
    latest = await _run(engine, a, RUN_RETENTION + timedelta(hours=1))
    assert await prune_runs(engine, NOW, batch=4) == 25
    assert await _run_ids(engine) == {latest}
    assert await _member_runs(engine) == {latest}


async def test_event_keys_older_than_the_window_are_forgotten_in_batches(
    store: ReportStore,
) -> None:
    engine = store.engine
    old = FakeClock(NOW - KEEP_FOR - DAY)
    for index in range(10):
        assert await first_time(engine, f"telegram:{index}", old)
    assert await first_time(engine, "telegram:new", FakeClock(NOW))
    assert await forget_older_than(engine, FakeClock(NOW), batch=3) == 10
    async with engine.connect() as conn:
        left = list((await conn.execute(select(processed_events.c.key))).scalars())
    assert left == ["telegram:new"]


async def test_the_ticker_prunes_once_an_hour_on_the_service_clock(store: ReportStore) -> None:
    engine = store.engine
    [a] = await setup_destinations(engine, channel("a", "A", schedule="0 3 * * *"))
    clock = FakeClock(NOW)
    ticker = DigestTicker(engine, SubscriptionStore(engine, clock), Renderer(), clock)
    await _run(engine, a, 40 * DAY)
    await ticker.tick()  # plans today's 03:00 run and prunes the old one
    kept = await _run_ids(engine)
    assert len(kept) == 1
    await _run(engine, a, 41 * DAY)
    clock.advance(15)
    await ticker.tick()
    assert len(await _run_ids(engine)) == 2  # not an hour yet
    clock.advance(PRUNE_EVERY.total_seconds())
    await ticker.tick()
    assert await _run_ids(engine) == kept


async def _edition(engine: AsyncEngine, age: timedelta, run_ids: list[int]) -> int:
    """An edition created `age` before NOW with one message and one entry, the runs' own."""
    async with engine.begin() as conn:
        [edition] = await new_editions(conn, 1)
        message = EditionMessage({"text": "shared"})
        await fill_editions(conn, NOW - age, [EditionContent(edition, [message], [])])
        await conn.execute(
            digest_runs.update().where(digest_runs.c.id.in_(run_ids)).values(edition_id=edition)
        )
    return edition


async def test_an_edition_goes_once_no_run_points_at_it(store: ReportStore) -> None:
    engine = store.engine
    a, b = await setup_destinations(engine, channel("a", "A"), channel("b", "B"))
    old_a = await _run(engine, a, 40 * DAY, "delivered", ("sent",))
    old_b = await _run(engine, b, 40 * DAY, "delivered", ("sent",))
    await _run(engine, a, DAY)  # a's latest, so its old run may go; b's old one is its latest
    gone = await _edition(engine, 40 * DAY, [old_a])
    kept = await _edition(engine, 40 * DAY, [old_b])
    await prune(engine, NOW)
    async with engine.connect() as conn:
        left = set((await conn.execute(select(editions.c.id))).scalars())
        messages = set((await conn.execute(select(edition_messages.c.edition_id))).scalars())
    assert left == {kept} and messages == {kept} and gone not in left
