"""Per-platform send pacing: in the process, or shared by every replica through PostgreSQL.

A platform's rate is per bot, whatever the number of replicas (Telegram's overall limit, in
bot/core/render/limits/telegram.py). One process paces itself in memory; replicas on PostgreSQL
take their send slots from one row per platform (`pace_slots`), so together they never exceed
the rate. The slot is computed from the database's clock, so replicas whose clocks differ
still agree. The rate is the sender's `max_per_second`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.logs import log
from bot.core.models import Platform
from bot.core.store.sql.db import writers_run_at_once

logger = logging.getLogger("prdigest.delivery")


class Pace(Protocol):
    async def wait(self, stopping: asyncio.Event | None = None) -> bool:
        """True when this process may send the next message on the platform, now; False,
        without sending, for a waiter whose turn comes after `stopping` was set (a queue of
        claimed rows must not hold up shutdown by waiting out its slots), or whose shared slots
        kept passing before it could send (see `SharedPace`)."""
        ...


LATE_WAKE_SHARE = 0.25  # of an interval: a late wake-up within this keeps the schedule
# A shared slot passed by more than LATE_WAKE_SHARE of an interval, or by this if more, is
# left empty. Finer than this, a busy machine's scheduler (a time slice is a few ms) could not
# hold it; a real platform's quarter interval is longer (Telegram's shared one: 9 ms).
LATE_FLOOR_SECONDS = 0.005
REBOOK_SECONDS = 1.0  # slots that keep passing are booked again this long, then none is sent
LINK_SAMPLES = 32  # bookings whose readings of the database's clock place its slots here


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
    RETURNING EXTRACT(EPOCH FROM (pace_slots.next_at - make_interval(secs => :gap))) AS slot,
              EXTRACT(EPOCH FROM clock_timestamp()) AS now
    """
)


class ClockLink:
    """Where a moment read on the database's clock falls on this process's clock.

    A booking reads the database's clock somewhere between two readings of this process's
    clock (before its statement left, after the answer came back), so the offset between the
    clocks lies within those bounds. The last `keep` bookings' bounds, intersected, pin it down
    to about the quickest of their round trips, however late any one answer came back. Bounds
    that no longer overlap (a clock set by hand, another server) start again from the newest.
    """

    def __init__(self, keep: int = LINK_SAMPLES) -> None:
        self._bounds: deque[tuple[float, float]] = deque(maxlen=keep)

    def sample(self, before: float, remote_now: float, after: float) -> None:
        """The database's clock read `remote_now` between local `before` and `after`."""
        self._bounds.append((remote_now - after, remote_now - before))
        low, high = self._offset()
        if low > high:
            newest = self._bounds[-1]
            self._bounds.clear()
            self._bounds.append(newest)

    def local(self, remote: float) -> tuple[float, float]:
        """The earliest and the latest local moment that the database's `remote` can be."""
        low, high = self._offset()
        return remote - high, remote - low

    def _offset(self) -> tuple[float, float]:
        return max(b[0] for b in self._bounds), min(b[1] for b in self._bounds)


class SharedPace:
    """At most `rate` sends per second for one platform across all replicas (PostgreSQL).

    Each send books the next slot in the database, waits for it, and looks at the clock once
    more right before it is let go, after the last await: a slot that has passed by more than
    LATE_WAKE_SHARE of an interval (LATE_FLOOR_SECONDS at least), whatever held this process up
    (a slow answer, a busy event loop, a process descheduled or stopped), is left empty and
    another is booked, never sent onto, since the next slots are other replicas'. The slot's
    place on this process's clock comes from the database's clock (`ClockLink`), so a delay
    anywhere after the database booked it counts, even one before its answer was read. Slots
    that keep passing for REBOOK_SECONDS give the turn up: the claimed row goes back unsent."""

    def __init__(
        self,
        engine: AsyncEngine,
        platform: Platform,
        rate: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.engine = engine
        self.platform = platform
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.clock = clock
        self.sleep = sleep
        self.link = ClockLink()
        self.lock = asyncio.Lock()
        self.last_go = float("-inf")

    async def wait(self, stopping: asyncio.Event | None = None) -> bool:
        if self.interval == 0.0:
            return not (stopping is not None and stopping.is_set())
        # One reservation at a time per process: slots booked far ahead by many tasks would all
        # fire together after a stall, a burst the platform counts against us.
        async with self.lock:
            give_up = self.clock() + REBOOK_SECONDS
            while not (stopping is not None and stopping.is_set()):
                if await self._turn():
                    return True
                if self.clock() >= give_up:
                    break  # slots kept passing: the row is given back unsent, claimed again
            return False

    async def _turn(self) -> bool:
        """Books a slot and waits for it: True to send now, False when it has passed."""
        earliest, latest = await self._book()
        # Never before the slot can have begun (the one before is another replica's), nor
        # closer to this process's previous send than a slightly late wake-up allows.
        go_at = max(latest, self.last_go + self.interval * (1 - LATE_WAKE_SHARE))
        delay = go_at - self.clock()
        if delay > 0:
            await self.sleep(delay)
        # The last look at the clock: nothing is awaited between here and the request.
        now = self.clock()
        if now - earliest > max(self.interval * LATE_WAKE_SHARE, LATE_FLOOR_SECONDS):
            late_ms = round(1000 * (now - earliest), 1)
            log(
                logger,
                "pace.slot_passed",
                logging.DEBUG,
                platform=self.platform.value,
                late_ms=late_ms,
            )
            return False
        self.last_go = now
        return True

    async def _book(self) -> tuple[float, float]:
        """Takes the platform's next slot in the database: the earliest and the latest moment
        on this process's clock that it can begin."""
        params = {"platform": self.platform.value, "gap": self.interval}
        async with self.engine.connect() as conn:
            # One statement, atomic alone: no BEGIN and COMMIT round trips around it, and the
            # row's lock is let go as soon as the slot is taken.
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            before = self.clock()
            slot, remote_now = await self._ask(conn, params)
            after = self.clock()
        self.link.sample(before, remote_now, after)
        return self.link.local(slot)

    async def _ask(self, conn: AsyncConnection, params: dict[str, Any]) -> tuple[float, float]:
        """(the slot's start, the database's clock), both in seconds on the database's clock."""
        row = (await conn.execute(_TAKE_SLOT, params)).one()
        return float(row.slot), float(row.now)


SHARED_HEADROOM = 0.93  # slots planned in the database arrive with more jitter (round trips)


def make_pace(engine: AsyncEngine, platform: Platform, rate: float) -> Pace:
    if writers_run_at_once(engine):  # replicas may send too: the pace is shared in the store
        return SharedPace(engine, platform, rate * SHARED_HEADROOM)
    return LocalPace(rate)
