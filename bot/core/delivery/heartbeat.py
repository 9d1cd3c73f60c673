"""A sender's heartbeat, and the release of a dead sender's claims without waiting out LEASE.

A claimed row stays leased to its sender for LEASE (60 s), so no other replica takes a send that
may be in flight. When that sender is known to be dead, its rows are freed at once instead:
- every sender keeps a lease named `worker:<its id>` in the `leases` table, renewed every
  BEAT_SECONDS for BEAT_TTL; a SIGKILLed sender stops renewing, and BEAT_TTL later any replica
  (or its own restart) sees the beat expired;
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
from datetime import timedelta

from sqlalchemy import select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.clock import Clock, utc_clock
from bot.core.delivery.ledger import RowStatus
from bot.core.store.db import write_transaction
from bot.core.store.leases import release, take
from bot.core.store.tables import leases, outbox
from bot.logs import log

logger = logging.getLogger("prdigest.delivery")

BEAT_SECONDS = 1.0
BEAT_TTL = timedelta(seconds=3)
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

    def __init__(self, engine: AsyncEngine, worker: str, clock: Clock = utc_clock) -> None:
        self.engine = engine
        self.worker = worker
        self.clock = clock
        self.host = socket.gethostname()

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
            beats = await conn.execute(
                select(leases.c.name, leases.c.expires_at).where(leases.c.name.in_(names))
            )
            expired = {str(r.name)[len(BEAT_PREFIX) :] for r in beats if r.expires_at < now}
        return sorted(h for h in others if h in expired or pid_gone(h, self.host))

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
