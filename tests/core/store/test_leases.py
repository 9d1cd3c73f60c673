"""Named leases: one holder at a time, taken over when the holder dies."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.core.store.leases import LeaseHeld, release, take
from bot.core.store.reports import ReportStore

NOW = datetime(2026, 9, 1, tzinfo=UTC)
TTL = timedelta(seconds=30)


async def test_one_holder_at_a_time_until_it_expires_or_is_released(store: ReportStore) -> None:
    engine = store.engine
    assert await take(engine, "poller", "a", NOW, TTL) is None
    held = await take(engine, "poller", "b", NOW + timedelta(seconds=5), TTL)
    assert isinstance(held, LeaseHeld) and held.holder == "a"
    assert await take(engine, "poller", "a", NOW + timedelta(seconds=20), TTL) is None, "renewed"
    assert await take(engine, "poller", "b", NOW + timedelta(seconds=40), TTL) is not None
    assert await take(engine, "poller", "b", NOW + timedelta(seconds=51), TTL) is None, "expired"
    await release(engine, "poller", "b")
    assert await take(engine, "poller", "c", NOW + timedelta(seconds=52), TTL) is None
