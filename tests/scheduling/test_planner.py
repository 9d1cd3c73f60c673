"""Where a tick plans: the planning process plans what the loop would (same runs, same outbox),
says when the store is down, is replaced when it dies and stops with the service; `auto`
moves there only once a tick reads many destinations."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from sqlalchemy import func, select

import bot.scheduling.planner as planner_module
from bot.core.clock import utc_clock
from bot.core.delivery.runs import PlannedRun
from bot.core.render.renderer import Renderer
from bot.core.store.errors import is_outage
from bot.core.store.reports import ReportStore
from bot.core.store.sql.tables import outbox
from bot.scheduling.planner import (
    NICENESS,
    ChildSetup,
    Planner,
    PlanningOutage,
    child_setup,
    digest_ticker,
)
from bot.settings import BotConfig
from bot.settings.planner import PlannerMode
from tests.kits.delivery import FakeClock, add_reports, channel, setup_destinations

TAGS = ["rollout", "fix", "ci"]
UNREACHABLE = "postgresql+psycopg://postgres@127.0.0.1:1/nothing"  # nothing listens on port 1


async def _team(store: ReportStore) -> BotConfig:
    """Three console channels, each following its tag, and reports for each."""
    chats = [channel(tag, f"T{i}", tags=[tag]) for i, tag in enumerate(TAGS)]
    await setup_destinations(store.engine, *chats)
    await add_reports(store, range(1, 10), tags=TAGS)
    return BotConfig(channels=chats)


def _planner(store: ReportStore, config: BotConfig, mode: PlannerMode) -> Planner:
    ticker = digest_ticker(store.engine, config, Renderer())
    return Planner(ticker, mode, child_setup(store.engine, config, utc_clock))


@asynccontextmanager
async def _closing(planner: Planner) -> AsyncIterator[Planner]:
    """The planner, closed (its process stopped) however the test ends."""
    try:
        yield planner
    finally:
        await planner.close()


async def _outbox_rows(store: ReportStore) -> int:
    async with store.engine.connect() as conn:
        return int((await conn.execute(select(func.count()).select_from(outbox))).scalar_one())


def _assert_yields_the_cpu(pid: int) -> None:
    """The planning process runs at the least CPU priority: SCHED_IDLE on Linux, else nice."""
    if hasattr(os, "SCHED_IDLE"):
        assert os.sched_getscheduler(pid) == os.SCHED_IDLE
    else:
        assert os.getpriority(os.PRIO_PROCESS, pid) >= NICENESS


async def test_the_planning_process_plans_every_due_digest_into_the_outbox(
    store: ReportStore,
) -> None:
    planner = _planner(store, await _team(store), PlannerMode.PROCESS)
    async with _closing(planner):
        planned = await planner.tick()
        assert planner.pid is not None and planner.pid != os.getpid()
        _assert_yields_the_cpu(planner.pid)
        assert planned.created == len(TAGS) == sum(planned.by_status.values())
        assert await _outbox_rows(store) == planned.messages > 0
        assert planner.destinations == planned.destinations == len(TAGS)
        again = await planner.tick()  # the same fire: planned once, whoever asks
        assert again.created == 0 and again.messages == 0
    assert planner.pid is None


async def test_a_store_the_process_cannot_reach_is_an_outage_not_a_crash(
    store: ReportStore,
) -> None:
    config = BotConfig()
    ticker = digest_ticker(store.engine, config, Renderer())
    planner = Planner(ticker, PlannerMode.PROCESS, ChildSetup(UNREACHABLE, config))
    async with _closing(planner):
        with pytest.raises(PlanningOutage) as raised:
            await planner.tick()
        assert is_outage(raised.value)  # the service's tick logs it and tries again later


async def test_a_planning_process_that_dies_is_replaced(
    store: ReportStore, caplog: pytest.LogCaptureFixture
) -> None:
    planner = _planner(store, await _team(store), PlannerMode.PROCESS)
    async with _closing(planner):
        await planner.tick()
        first = planner.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        with caplog.at_level(logging.WARNING, logger="prdigest.scheduler"):
            await planner.tick()  # planned on the loop this time
        assert "scheduler.planner_lost" in caplog.text
        assert planner.pid is None
        await planner.tick()
        assert planner.pid not in (None, first)


async def test_auto_plans_on_the_loop_until_a_tick_reads_many_destinations(
    store: ReportStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    planner = _planner(store, await _team(store), PlannerMode.AUTO)
    assert not planner.in_process()
    planned = await planner.tick()
    assert planner.pid is None and planner.destinations == len(TAGS) == planned.created
    assert not planner.in_process()
    monkeypatch.setattr(planner_module, "PROCESS_FROM", len(TAGS))
    assert planner.in_process()
    assert not _planner(store, BotConfig(), PlannerMode.LOOP).in_process()

    restarted = _planner(store, BotConfig(), PlannerMode.AUTO)  # a service started again
    async with _closing(restarted):
        await restarted.start()  # the store already holds PROCESS_FROM destinations
        assert restarted.pid is not None and restarted.destinations == len(TAGS)


def test_no_process_for_an_in_memory_database_or_a_clock_that_is_not_the_real_one(
    store: ReportStore,
) -> None:
    from bot.core.store.sql.db import create_engine

    memory = create_engine("sqlite://")
    assert child_setup(memory, BotConfig(), utc_clock) is None
    assert child_setup(store.engine, BotConfig(), FakeClock()) is None
    setup = child_setup(store.engine, BotConfig(), utc_clock)
    assert setup is not None and setup.database_url.startswith(store.engine.url.drivername)


async def test_a_tick_cut_short_by_the_stop_does_not_plan_again_on_the_loop(
    store: ReportStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    planner = _planner(store, await _team(store), PlannerMode.PROCESS)
    await planner.start()
    assert planner.pid is not None

    async def on_the_loop() -> list[PlannedRun]:
        raise AssertionError("a stopping service planned on the loop")

    monkeypatch.setattr(planner.ticker, "tick", on_the_loop)
    monkeypatch.setattr(planner_module, "STOP_SECONDS", 0.0)  # SIGTERM at once
    ticking = asyncio.ensure_future(planner.tick())
    await asyncio.sleep(0)  # the tick is in the process's hands
    await planner.close()
    summary = await ticking  # planned whole by the process, or not at all
    assert summary.created in (0, len(TAGS))
    assert (await planner.tick()).created == 0
