"""A destination whose digest cannot be planned or rendered never stops the tick for the others:
it is recorded on the destination, tried again with backoff, its chat told once if it persists,
and its streak cleared by the first planning that works."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select

from bot.core.delivery.plan_failures import (
    PLAN_RETRY_FIRST,
    PLAN_RETRY_MAX,
    PLAN_TELL_AFTER,
    plan_retry_delay,
)
from bot.core.digest.select import Digest
from bot.core.render.options import DigestPart
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.sql.tables import destinations, outbox
from bot.core.store.status import collect
from bot.core.store.subscriptions import SubscriptionStore
from bot.scheduling.tick import DigestTicker
from tests.kits.delivery import FakeClock, add_reports, channel, setup_destinations

POISONED = "poisoned"


class FailingRenderer(Renderer):
    """Raises for one destination's digest: any bug that one destination's data provokes."""

    def __init__(self) -> None:
        super().__init__()
        self.failing = True
        self.tries = 0

    def digest_parts(self, digest: Digest, *args: Any, **kwargs: Any) -> list[DigestPart]:
        if POISONED in digest.title:
            self.tries += 1
            if self.failing:
                raise ValueError("EntryView does not fit even with every text field cut")
        return super().digest_parts(digest, *args, **kwargs)


async def _streak(store: ReportStore, target: str) -> tuple[int, str | None, datetime | None]:
    async with store.engine.connect() as conn:
        row = (
            await conn.execute(
                select(
                    destinations.c.plan_failures,
                    destinations.c.plan_error,
                    destinations.c.plan_retry_at,
                ).where(destinations.c.target == target)
            )
        ).one()
    return int(row[0]), row[1], row[2]


async def _notices(store: ReportStore) -> list[Any]:
    async with store.engine.connect() as conn:
        rows = await conn.execute(select(outbox.c.payload).where(outbox.c.run_id.is_(None)))
        return [row[0] for row in rows]


def test_the_wait_doubles_from_a_minute_up_to_an_hour() -> None:
    assert plan_retry_delay(1) == PLAN_RETRY_FIRST == timedelta(minutes=1)
    assert plan_retry_delay(2) == timedelta(minutes=2)
    assert plan_retry_delay(3) == timedelta(minutes=4)
    assert plan_retry_delay(50) == PLAN_RETRY_MAX == timedelta(hours=1)


async def test_one_destination_failing_to_render_leaves_the_others_planned(
    store: ReportStore,
) -> None:
    clock = FakeClock(datetime(2026, 9, 1, 9, 0, 5, tzinfo=UTC))
    await setup_destinations(
        store.engine, channel("a", "A"), channel(POISONED, "P", title=POISONED), channel("c", "C")
    )
    await add_reports(store, [1, 2])
    renderer = FailingRenderer()
    ticker = DigestTicker(store.engine, SubscriptionStore(store.engine), renderer, clock)

    planned = await ticker.tick()

    assert sorted(run.entries for run in planned if run.created) == [2, 2]
    failures, error, retry_at = await _streak(store, "P")
    assert failures == 1 and error is not None and "does not fit" in error
    assert retry_at == clock.now + PLAN_RETRY_FIRST
    [poisoned] = [item for item in await collect(store.engine) if item.destination == POISONED]
    assert poisoned.plan_error == error and poisoned.plan_retry_at == retry_at.isoformat()


async def test_a_failing_destination_backs_off_tells_its_chat_once_and_recovers(
    store: ReportStore,
) -> None:
    clock = FakeClock(datetime(2026, 9, 1, 9, 0, 5, tzinfo=UTC))
    await setup_destinations(store.engine, channel(POISONED, "P", title=POISONED))
    await add_reports(store, [1])
    renderer = FailingRenderer()
    ticker = DigestTicker(store.engine, SubscriptionStore(store.engine), renderer, clock)

    await ticker.tick()
    clock.advance(30)  # inside the first wait: not tried
    await ticker.tick()
    assert renderer.tries == 1
    for failures in range(2, PLAN_TELL_AFTER + 2):
        retry_at = (await _streak(store, "P"))[2]
        assert retry_at is not None
        clock.now = retry_at
        await ticker.tick()
        assert renderer.tries == failures
        assert (await _streak(store, "P"))[0] == failures
    [told] = await _notices(store)  # once a streak, not at every failure after
    assert "failed to build 3 times in a row" in str(told)

    renderer.failing = False
    retry_at = (await _streak(store, "P"))[2]
    assert retry_at is not None
    clock.now = retry_at
    [run] = await ticker.tick()

    assert run.created and run.entries == 1
    assert await _streak(store, "P") == (0, None, None)
