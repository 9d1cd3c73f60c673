"""The shared pace on a fake clock: a send whose slot passed before it could leave is re-booked.

No database: `pace_slots` is a field here, on a database clock `DB_AHEAD` seconds ahead of this
process's, and the fake clock jumps (a process descheduled, or stopped) at chosen moments
between booking a slot and sending on it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.delivery.pacing import (
    LATE_FLOOR_SECONDS,
    LATE_WAKE_SHARE,
    REBOOK_SECONDS,
    ClockLink,
    SharedPace,
)
from bot.core.models import Platform

RATE = 50.0
INTERVAL = 1 / RATE
TOLERANCE = max(INTERVAL * LATE_WAKE_SHARE, LATE_FLOOR_SECONDS)
DB_AHEAD = 1_000_000.0  # the database's clock reads this far ahead of the process's


class FakeClock:
    """Monotonic seconds that only move when slept on, or made to jump."""

    def __init__(self) -> None:
        self.now = 50.0
        self.jumps: list[float] = []  # the next sleeps each end this much later than asked

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds + (self.jumps.pop(0) if self.jumps else 0.0)
        await asyncio.sleep(0)


class NoEngine:
    """Stands for the engine: `_ask` below never touches the connection."""

    @contextlib.asynccontextmanager
    async def connect(self) -> AsyncIterator[NoConnection]:
        yield NoConnection()


class NoConnection:
    async def execution_options(self, **options: object) -> NoConnection:
        return self


class ScriptedPace(SharedPace):
    """A SharedPace whose `pace_slots` row is `next_at`; `held[n]`: seconds this process is
    held up after the database made its n-th booking (1-based), before reading the answer."""

    def __init__(self, clock: FakeClock, held: dict[int, float] | None = None) -> None:
        engine = cast(AsyncEngine, NoEngine())
        super().__init__(engine, Platform.TELEGRAM, RATE, clock=clock, sleep=clock.sleep)
        self.fake = clock
        self.held = held or {}
        self.next_at = 0.0
        self.slots: list[float] = []  # each booked slot's start, on this process's clock

    async def _ask(self, conn: AsyncConnection, params: dict[str, Any]) -> tuple[float, float]:
        self.fake.now += 0.0005  # the way there
        remote_now = self.fake.now + DB_AHEAD
        slot = max(self.next_at, remote_now)
        self.next_at = slot + INTERVAL
        self.slots.append(slot - DB_AHEAD)
        self.fake.now += 0.0005 + self.held.get(len(self.slots), 0.0)  # the way back
        return slot, remote_now


async def sends(pace: ScriptedPace, count: int) -> list[float]:
    """When each of `count` sends was let go (a refused turn sends nothing)."""
    sent: list[float] = []
    for _ in range(count):
        if await pace.wait():
            sent.append(pace.fake.now)
    return sent


def on_a_slot(sent: list[float], slots: list[float]) -> list[float]:
    """Each send's lateness after the slot it went on (the latest slot begun by then)."""
    return [at - max(s for s in slots if s <= at + 1e-9) for at in sent]


async def test_a_slot_that_passes_between_booking_and_sending_is_rebooked_not_sent() -> None:
    clock = FakeClock()
    pace = ScriptedPace(clock)
    await sends(pace, 2)  # the link to the database's clock is made, the pace is running
    clock.jumps = [5 * INTERVAL]  # descheduled while it slept towards its third slot
    sent = await sends(pace, 1)
    assert len(pace.slots) == 4, "the passed slot was left empty, another booked"
    assert len(sent) == 1 and sent[0] >= pace.slots[3]
    assert sent[0] - pace.slots[3] <= TOLERANCE, "sent on the new slot, not the passed one"


async def test_a_process_held_up_before_reading_the_booking_does_not_send_on_it() -> None:
    # The database booked the slot on time; the answer was read 0.3 s later (a stopped
    # process, a busy loop). The slot is long past, though the answer alone says "in 0 s".
    clock = FakeClock()
    pace = ScriptedPace(clock, held={3: 0.3})
    sent = await sends(pace, 4)
    assert len(pace.slots) == 5
    assert len(sent) == 4
    assert all(0 <= late <= TOLERANCE for late in on_a_slot(sent, pace.slots)), sent
    assert not any(pace.slots[2] <= at <= pace.slots[2] + INTERVAL for at in sent)


async def test_a_wake_up_late_within_the_tolerance_still_sends() -> None:
    clock = FakeClock()
    pace = ScriptedPace(clock)
    await sends(pace, 2)
    clock.jumps = [TOLERANCE / 2]
    sent = await sends(pace, 1)
    assert len(pace.slots) == 3 and sent == [clock.now]


async def test_slots_that_keep_passing_send_nothing() -> None:
    # Every answer to the second send's bookings is read two intervals after it was made, for
    # longer than the pace keeps booking: the turn is given up, the row would go back unsent.
    clock = FakeClock()
    late = 2 * INTERVAL
    tries = int(REBOOK_SECONDS / late) + 2
    pace = ScriptedPace(clock, held={n: late for n in range(2, tries + 2)})
    await sends(pace, 1)
    started = clock.now
    assert await sends(pace, 1) == []
    assert REBOOK_SECONDS <= clock.now - started < REBOOK_SECONDS + 2 * late
    booked = len(pace.slots)
    assert len(await sends(pace, 1)) == 1, "the next send goes again"
    assert len(pace.slots) <= booked + tries


async def test_a_stop_while_rebooking_sends_nothing() -> None:
    clock = FakeClock()
    pace = ScriptedPace(clock)
    stopping = asyncio.Event()

    async def stop_during_sleep(seconds: float) -> None:
        stopping.set()
        clock.now += seconds + INTERVAL

    pace.sleep = stop_during_sleep
    assert not await pace.wait(stopping)
    assert len(pace.slots) == 1


def test_the_clock_link_keeps_the_tightest_bounds() -> None:
    link = ClockLink(keep=4)
    link.sample(10.0, 1010.5, 11.0)  # offset within [999.5, 1000.5]
    link.sample(20.0, 1020.2, 20.4)  # [999.8, 1000.2]
    assert link.local(1030.0) == pytest.approx((29.8, 30.2))
    link.sample(29.0, 1030.0, 31.0)  # a slow round trip narrows nothing
    assert link.local(1030.0) == pytest.approx((29.8, 30.2))


def test_the_clock_link_starts_again_when_the_clocks_no_longer_agree() -> None:
    link = ClockLink()
    link.sample(10.0, 1010.0, 10.1)
    link.sample(20.0, 2020.0, 20.1)  # the database clock was set 1,000 s ahead
    assert link.local(2030.0) == pytest.approx((30.0, 30.1))
