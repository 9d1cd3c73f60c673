"""The tick shares the event loop with the chat: planning hands it over between digests."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

import bot.core.delivery.editions as editions_module
from bot.core.delivery.editions import Breather
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import SubscriptionStore
from bot.scheduling.tick import DigestTicker
from tests.kits.delivery import FakeClock, add_reports, channel, setup_destinations


async def _turns_while(work: asyncio.Future[object] | asyncio.Task[object]) -> int:
    """How many turns of the loop another task got while `work` ran."""
    turns = 0
    while not work.done():
        turns += 1
        await asyncio.sleep(0)
    await work
    return turns


async def test_a_breather_hands_the_loop_over_once_its_slice_has_passed() -> None:
    async def breathe_many(breather: Breather) -> object:
        for _ in range(50):
            await breather.breathe()
        return None

    always = asyncio.ensure_future(breathe_many(Breather(every=0.0)))
    assert await _turns_while(always) >= 50
    never = asyncio.ensure_future(breathe_many(Breather(every=3600.0)))
    assert await _turns_while(never) == 1  # started, then ran to its end without a turn


async def test_the_tick_breathes_between_the_digests_it_builds_and_renders(
    store: ReportStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    breaths = 0
    original = Breather.breathe

    async def counted(self: Breather) -> None:
        nonlocal breaths
        breaths += 1
        await original(self)

    monkeypatch.setattr(editions_module.Breather, "breathe", counted)
    # Each destination follows its own tag: six audiences, six digests, six editions.
    tags = ["rollout", "fix", "ci", "perf", "docs", "infra"]
    chats = [channel(tag, f"T{i}", tags=[tag]) for i, tag in enumerate(tags)]
    await setup_destinations(store.engine, *chats)
    await add_reports(store, range(1, 13), tags=tags)
    clock = FakeClock(datetime(2026, 9, 1, 9, 0, 5, tzinfo=UTC))
    ticker = DigestTicker(store.engine, SubscriptionStore(store.engine), Renderer(), clock)
    planned = await ticker.tick()
    assert len(planned) == len(tags)
    # picked, built and rendered: a breath after each of the six, in each of the three steps
    assert breaths >= 3 * len(tags)
