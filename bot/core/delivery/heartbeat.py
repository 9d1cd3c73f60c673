"""A sender's heartbeat, and the release of a dead sender's claims without waiting out LEASE.

A claimed row stays leased to its sender for LEASE (60 s), so no other replica takes a send that
may be in flight. When that sender is known to be dead, its rows are freed at once instead:
- every sender keeps a lease named `worker:<its id>` in the `leases` table, renewed every
  BEAT_SECONDS; a SIGKILLed sender stops renewing. Another sender judges a beat by watching it
  change, on its own monotonic clock: a beat it has seen unchanged for STALE_SECONDS is a dead
  sender's. No two hosts' clocks are compared (a skewed or a test's fast clock cannot make a
  live sender look dead), and a sender whose loop stalls for less than that keeps its rows;
- a sender on this host whose process id is gone (`host:pid`, `os.kill(pid, 0)` says no such
  process) is dead at once: a restart frees its own predecessor's claims on its first beat.
  Host names must then be unique per process namespace, as Docker and Kubernetes make them.
A freed row's lease has ended; the next claim takes it like any expired lease (a send that was
in flight when the sender died may then go out twice: the one duplicate window of a kill).
A sender without a beat row (one stopped cleanly, which gave its rows back) is judged by its
lease alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.clock import Clock, utc_clock
from bot.core.logs import log
from bot.core.store.leases import release, take
from bot.core.store.sql.db import write_transaction
from bot.core.store.sql.tables import leases, outbox
from bot.core.store.statuses import RowStatus

logger = logging.getLogger("prdigest.delivery")

BEAT_SECONDS = 1.0
BEAT_TTL = timedelta(seconds=30)  # the row's own expiry: only for a holder never watched
STALE_SECONDS = 4.0
BEAT_PREFIX = "worker:"
FREED_AGO = timedelta(seconds=1)  # a freed claim's lease ends this long ago: claimable now


def pid_gone(holder: str, host: str) -> bool:
    """True when `holder` (`host:pid`) ran on this host and that process no longer exists."""
    name, _, pid = holder.rpartition(":")
    if name != host or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):  # alive under another user; not a pid at all
        return False
    return False


class Heartbeat:
    """Beats for `worker` and frees the claims of senders known to be dead."""

    def __init__(
        self,
        engine: AsyncEngine,
        worker: str,
        clock: Clock = utc_clock,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self.worker = worker
        self.clock = clock
        self.monotonic = monotonic
        self.host = socket.gethostname()
        self._seen: dict[str, tuple[datetime, float]] = {}  # holder: (its beat, seen since)

    async def run(self, stopping: asyncio.Event) -> None:
        """Beat until `stopping` is set; a store outage skips beats, never ends the loop."""
        while not stopping.is_set():
            try:
                await take(
                    self.engine, BEAT_PREFIX + self.worker, self.worker, self.clock(), BEAT_TTL
                )
                await self.free_dead_claims()
            except (SQLAlchemyError, OSError) as exc:
                log(logger, "delivery.heartbeat_failed", logging.WARNING, error=type(exc).__name__)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), BEAT_SECONDS)

    async def beat(self) -> None:
        await take(self.engine, BEAT_PREFIX + self.worker, self.worker, self.clock(), BEAT_TTL)

    async def stop(self) -> None:
        """A clean stop: the beat goes (the rows were given back; the lease judges the rest).
        A store that cannot be reached now lets it expire by itself."""
        with contextlib.suppress(SQLAlchemyError, OSError):
            await release(self.engine, BEAT_PREFIX + self.worker, self.worker)

    async def dead_holders(self) -> list[str]:
        """Senders holding live claims that are known to be dead."""
        now = self.clock()
        async with self.engine.connect() as conn:
            holders = (
                await conn.execute(
                    select(outbox.c.claimed_by)
                    .where(outbox.c.status == RowStatus.SENDING.value, outbox.c.lease_until > now)
                    .distinct()
                )
            ).scalars()
            others = {str(h) for h in holders if h and h != self.worker}
            if not others:
                return []
            names = [BEAT_PREFIX + holder for holder in others]
            rows = await conn.execute(
                select(leases.c.name, leases.c.expires_at).where(leases.c.name.in_(names))
            )
            beats = {str(r.name)[len(BEAT_PREFIX) :]: r.expires_at for r in rows}
        self._seen = {h: seen for h, seen in self._seen.items() if h in beats}
        stale = {h for h, beat in beats.items() if self._stale(h, beat)}
        return sorted(h for h in others if h in stale or pid_gone(h, self.host))

    def _stale(self, holder: str, beat: datetime) -> bool:
        """Whether `holder`'s beat has not moved for STALE_SECONDS of this process's time."""
        now = self.monotonic()
        seen = self._seen.get(holder)
        if seen is None or seen[0] != beat:
            self._seen[holder] = (beat, now)
            return False
        return now - seen[1] >= STALE_SECONDS

    async def free_dead_claims(self) -> int:
        """End the leases of dead senders' claims now; how many rows were freed."""
        dead = await self.dead_holders()
        if not dead:
            return 0
        now = self.clock()
        async with write_transaction(self.engine) as conn:
            freed = await conn.execute(
                update(outbox)
                .where(
                    outbox.c.status == RowStatus.SENDING.value,
                    outbox.c.claimed_by.in_(dead),
                    outbox.c.lease_until > now,
                )
                .values(lease_until=now - FREED_AGO)
            )
        log(
            logger, "delivery.dead_claims_freed", logging.WARNING, holders=dead, rows=freed.rowcount
        )
        return int(freed.rowcount or 0)
