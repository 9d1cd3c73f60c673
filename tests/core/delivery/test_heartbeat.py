"""A dead sender's claims are freed at once, not after the 60 s lease: its heartbeat stopped
moving (as the watcher's own clock measures), or it ran on this host and its process is gone.
A live sender's claims are never touched, whatever its clock says."""

from __future__ import annotations

import socket
import subprocess
import sys

from sqlalchemy import select

from bot.core.delivery import ledger
from bot.core.delivery.deliverer import LEASE
from bot.core.delivery.heartbeat import STALE_SECONDS, Heartbeat, pid_gone
from bot.core.delivery.outbox import plan_digest
from bot.core.models import Platform
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.sql.tables import outbox
from tests.kits.delivery import FakeClock, add_reports, channel, setup_destinations

RENDERER = Renderer()
HOST = socket.gethostname()


def gone_pid() -> int:
    """The pid of a process that has exited (and was reaped)."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(proc.stdout)


async def _claimed_by(store: ReportStore, worker: str, clock: FakeClock) -> list[int]:
    """Plan a digest and let `worker` claim its rows; their ids."""
    [sub] = await setup_destinations(store.engine, channel("a", "A"))
    await add_reports(store, range(1, 4))
    await plan_digest(store.engine, sub, clock(), RENDERER, clock())
    rows = await ledger.claim(store.engine, worker, clock(), (Platform.CONSOLE,), 50, LEASE)
    assert rows
    return [row.id for row in rows]


async def _leases_end(store: ReportStore) -> list[object]:
    async with store.engine.connect() as conn:
        return list((await conn.execute(select(outbox.c.lease_until))).scalars())


class Ticks:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_sender_whose_beat_stopped_loses_its_claims_at_once(store: ReportStore) -> None:
    clock, ticks = FakeClock(), Ticks()
    dead = Heartbeat(store.engine, "other-host:4242", clock)
    await dead.beat()
    await _claimed_by(store, dead.worker, clock)
    survivor = Heartbeat(store.engine, "survivor-host:1", clock, ticks)
    assert await survivor.free_dead_claims() == 0, "a beat seen for the first time"
    ticks.now += STALE_SECONDS / 2
    assert await survivor.free_dead_claims() == 0, "not stale yet"
    ticks.now += STALE_SECONDS
    assert await survivor.free_dead_claims() == 1
    taken = await ledger.claim(
        store.engine, survivor.worker, clock(), (Platform.CONSOLE,), 50, LEASE
    )
    assert [row.id for row in taken], "the freed row is claimable now, not in 60 s"


async def test_a_sender_of_this_host_whose_process_is_gone_loses_its_claims(
    store: ReportStore,
) -> None:
    clock = FakeClock()
    ids = await _claimed_by(store, f"{HOST}:{gone_pid()}", clock)
    restarted = Heartbeat(store.engine, f"{HOST}:999999", clock)
    assert await restarted.free_dead_claims() == len(ids)
    assert all(end < clock() for end in await _leases_end(store))  # type: ignore[operator]


async def test_a_live_sender_whose_clock_is_far_behind_keeps_its_claims(
    store: ReportStore,
) -> None:
    """Its beats lie in the watcher's past (a skewed host, a test's fast clock), but they move."""
    clock, behind, ticks = FakeClock(), FakeClock(), Ticks()
    behind.advance(-3600)
    live = Heartbeat(store.engine, "skewed-host:7", behind)
    await _claimed_by(store, live.worker, clock)
    watcher = Heartbeat(store.engine, "me:1", clock, ticks)
    for _ in range(5):
        await live.beat()
        assert await watcher.free_dead_claims() == 0
        behind.advance(1)
        ticks.now += STALE_SECONDS
    await live.beat()
    assert await watcher.dead_holders() == []


async def test_a_sender_without_a_beat_elsewhere_keeps_its_lease(store: ReportStore) -> None:
    clock = FakeClock()
    await _claimed_by(store, "far-host:77", clock)
    watcher = Heartbeat(store.engine, "me:1", clock)
    clock.advance(30)
    assert await watcher.free_dead_claims() == 0
    assert await watcher.dead_holders() == []


def test_pid_gone_only_judges_this_hosts_processes() -> None:
    assert pid_gone(f"{HOST}:{gone_pid()}", HOST)
    assert not pid_gone(f"{HOST}:1", HOST)  # init is alive
    assert not pid_gone(f"elsewhere:{gone_pid()}", HOST)
    assert not pid_gone("no-pid-here", HOST)
