"""Per-platform send pacing: in the process, or shared by every replica through PostgreSQL.

A platform's rate is per bot, whatever the number of replicas (Telegram's overall limit, in
bot/core/render/limits/telegram.py). One process paces itself in memory; replicas on PostgreSQL
take their send slots from one row per platform (`pace_slots`), so together they never exceed
the rate. The slot is computed from the database's clock, so replicas whose clocks differ
still agree. The rate is the sender's `max_per_second`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.models import Platform
from bot.core.store.sql.db import writers_run_at_once


class Pace(Protocol):
    async def wait(self, stopping: asyncio.Event | None = None) -> bool:
        """True when this process may send the next message on the platform; False, without
        taking a slot, for a waiter whose turn comes after `stopping` was set (a queue of
        claimed rows must not hold up shutdown by waiting out its slots)."""
        ...


LATE_WAKE_SHARE = 0.25  # of an interval: a late wake-up within this keeps the schedule
REBOOKS = 3  # shared slots found already past (by more than LATE_WAKE_SHARE) booked again


class LocalPace:
    """At most `rate` sends per second for one platform, in this process."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.next_at = 0.0
        self.lock = asyncio.Lock()

    async def wait(self, stopping: asyncio.Event | None = None) -> bool:
        # Waiters queue on the lock and each next slot counts from when the previous send was
        # really let go: a busy event loop that wakes a sleeper late must not make it "catch up"
        # with a burst (the platform counts arrivals, not our plan).
        async with self.lock:
            if stopping is not None and stopping.is_set():
                return False
            delay = self.next_at - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            # A sleeper woken a little late keeps the schedule (counting from "now" lost the
            # oversleep on every send, 3% of the rate); one woken later than that, or the
            # first send after a pause, starts a new schedule from now: no catching up.
            now = time.monotonic()
            on_time = now - self.next_at <= self.interval * LATE_WAKE_SHARE
            self.next_at = (self.next_at if on_time else now) + self.interval
            return True


_TAKE_SLOT = text(
    """
    INSERT INTO pace_slots (platform, next_at)
    VALUES (:platform, clock_timestamp() + make_interval(secs => :gap))
    ON CONFLICT (platform) DO UPDATE
      SET next_at = GREATEST(pace_slots.next_at, clock_timestamp()) + make_interval(secs => :gap)
    RETURNING EXTRACT(EPOCH FROM (pace_slots.next_at - make_interval(secs => :gap)
                                  - clock_timestamp()))
    """
)


class SharedPace:
    """At most `rate` sends per second for one platform across all replicas (PostgreSQL)."""

    def __init__(self, engine: AsyncEngine, platform: Platform, rate: float) -> None:
        self.engine = engine
        self.platform = platform
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.lock = asyncio.Lock()
        self.last_go = float("-inf")

    async def wait(self, stopping: asyncio.Event | None = None) -> bool:
        if self.interval == 0.0:
            return not (stopping is not None and stopping.is_set())
        # One reservation at a time per process: slots booked far ahead by many tasks would all
        # fire together after a stall, a burst the platform counts against us.
        async with self.lock:
            if stopping is not None and stopping.is_set():
                return False
            late = self.interval * LATE_WAKE_SHARE
            for attempt in range(REBOOKS + 1):
                delay = await self._book()
                # A booking whose answer came back late (a slow round trip, a busy loop) finds
                # its slot already past, and the next slots are other replicas': sent now, it
                # would land on one of theirs. Its slot stays empty and another is booked (a
                # few times at most: under a load that makes every answer late, it goes).
                if delay >= -late or attempt == REBOOKS:
                    break
            # This process keeps its own sends apart as well, the way LocalPace forgives a
            # slightly late wake-up but never lets one catch up with a burst.
            floor = self.last_go + self.interval * (1 - LATE_WAKE_SHARE) - time.monotonic()
            delay = max(delay, floor)
            if delay > 0:
                await asyncio.sleep(delay)
            self.last_go = time.monotonic()
            return True

    async def _book(self) -> float:
        """Takes the platform's next slot in the database: seconds until it comes (< 0: past)."""
        params = {"platform": self.platform.value, "gap": self.interval}
        async with self.engine.begin() as conn:
            delay = (await conn.execute(_TAKE_SLOT, params)).scalar()
        return float(delay) if delay is not None else 0.0


SHARED_HEADROOM = 0.93  # slots planned in the database arrive with more jitter (round trips)


def make_pace(engine: AsyncEngine, platform: Platform, rate: float) -> Pace:
    if writers_run_at_once(engine):  # replicas may send too: the pace is shared in the store
        return SharedPace(engine, platform, rate * SHARED_HEADROOM)
    return LocalPace(rate)
