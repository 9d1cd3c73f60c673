"""Senders claim outbox rows and deliver them, paced per destination and per platform.

A Sender (one per platform, in `bot/adapters/`; its contract is `port.py`) turns a payload
into one API call and reports a typed outcome; it never sleeps on a rate limit, but awaits the
platform pace's `turn` right before its request leaves. This module decides what each outcome
means for the ledger: reschedule on Retry-After, back off on 5xx, move a migrated chat,
deactivate a destination that is gone, fail a message the platform will never accept.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.clock import Clock, utc_clock
from bot.core.delivery import ledger, threads
from bot.core.delivery.heartbeat import Heartbeat
from bot.core.delivery.ledger import Claimed
from bot.core.delivery.pacing import make_pace
from bot.core.delivery.port import (
    Blocked,
    Gone,
    Moved,
    Outcome,
    Reconciles,
    Rejected,
    RetryAfter,
    Sender,
    Sent,
    Threads,
    Transient,
    Turn,
    WarmsUp,
    Withheld,
)
from bot.core.logs import log, observe
from bot.core.models import Platform
from bot.core.store.errors import is_outage

logger = logging.getLogger("prdigest.delivery")

LEASE = timedelta(seconds=60)
CLAIM_BATCH = 50
# While the store cannot be reached, claims are retried with a doubling pause up to this: a
# database that comes back is used again within seconds, not after a long backoff.
OUTAGE_RETRY_MAX_SECONDS = 5.0
REFILL_AT = CLAIM_BATCH // 2  # claim the next batch once this few rows are still unsent
IDLE_POLL_SECONDS = 0.5
SHORT_CLAIM_PAUSE_SECONDS = 0.1  # a claim came back short while sends are still in flight
MAX_RETRY_AFTER = timedelta(hours=1)
BACKOFF_BASE_SECONDS = 2.0
BACKOFF_MAX_SECONDS = 600.0
BLOCKED_LIMIT = 5  # consecutive "blocked/kicked" answers before a destination is deactivated
RECORD_RETRY_FIRST_SECONDS = 0.05  # a send's result that could not be written: first wait
RECORD_RETRY_MAX_SECONDS = 5.0  # ... doubling up to this, for as long as the store is away
RELEASE_ATTEMPTS = 3  # giving back an unsent row; after that its lease frees it


def backoff(attempts: int, rng: random.Random) -> float:
    """Exponential backoff with full jitter, bounded."""
    ceiling = min(BACKOFF_MAX_SECONDS, BACKOFF_BASE_SECONDS * 2 ** min(attempts, 16))
    return max(1.0, rng.uniform(ceiling / 2, ceiling))


class Deliverer:
    """Claims due rows and sends them; one per process, for every platform with a sender."""

    def __init__(
        self,
        engine: AsyncEngine,
        senders: Mapping[Platform, Sender],
        worker: str,
        clock: Clock = utc_clock,
        on_result: Callable[[Claimed, Outcome], None] | None = None,
        lease: timedelta = LEASE,
    ) -> None:
        self.engine = engine
        self.senders = dict(senders)
        self.worker = worker
        self.clock = clock
        self.on_result = on_result
        self.lease = lease
        self.paces = {p: make_pace(engine, p, s.max_per_second) for p, s in self.senders.items()}
        self.rng = random.Random()
        self._stopping = asyncio.Event()
        self.heartbeat = Heartbeat(engine, worker, clock)

    def stop(self) -> None:
        """Stop claiming; sends already in flight finish."""
        self._stopping.set()

    async def run_once(self, only_destination: int | None = None) -> int:
        """Claim what is due now and deliver it; the number of rows handled."""
        rows, send_by = await self._claim(only_destination)
        await asyncio.gather(*(self._deliver(row, send_by) for row in rows))
        return len(rows)

    async def run_forever(self) -> None:
        """Deliver until stopped, claiming the next rows while earlier ones are still paced or
        in flight: the pace never waits for the database between batches (a claim takes tens
        of milliseconds on a long queue; waiting for it after every batch cost 8% of the
        platform rate). A database outage is logged and retried with backoff; it never ends
        the loop (nothing would be delivered, silently, until a restart)."""
        in_flight: set[asyncio.Task[None]] = set()
        failures = 0
        beating = asyncio.create_task(self.heartbeat.run(self._stopping))
        try:
            while not self._stopping.is_set():
                pause = 0.0
                if len(in_flight) <= REFILL_AT:
                    claimed, failures = await self._refill(in_flight, failures)
                    if failures:
                        pause = min(OUTAGE_RETRY_MAX_SECONDS, 2.0**failures)
                    elif claimed < CLAIM_BATCH:  # nothing more is due yet
                        pause = SHORT_CLAIM_PAUSE_SECONDS if in_flight else IDLE_POLL_SECONDS
                await self._wait(in_flight, pause)
        finally:
            if in_flight:  # claimed rows not yet sent give themselves back (see _deliver)
                await asyncio.gather(*in_flight, return_exceptions=True)  # logged by _done
            self._stopping.set()
            await beating
            await self.heartbeat.stop()

    async def _claim(self, only_destination: int | None = None) -> tuple[list[Claimed], datetime]:
        """Due rows, and the time by which each must have left (half its lease), so a row
        that waited too long for its turn is never sent after another replica may take it."""
        now = self.clock()
        rows = await ledger.claim(
            self.engine,
            self.worker,
            now,
            tuple(self.senders),
            CLAIM_BATCH,
            self.lease,
            only_destination,
        )
        return rows, now + self.lease / 2

    async def _refill(self, in_flight: set[asyncio.Task[None]], failures: int) -> tuple[int, int]:
        """Claim a batch and start its sends; (rows claimed, consecutive store failures)."""
        try:
            rows, send_by = await self._claim()
        except (SQLAlchemyError, OSError) as exc:
            log(logger, "delivery.store_error", logging.ERROR, error=str(exc)[:500])
            return 0, failures + 1
        if rows and not in_flight:
            await self._warm_up({row.platform for row in rows})
        for row in rows:
            task = asyncio.create_task(self._deliver(row, send_by))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
            observe(task, logger, "delivery.task_failed")
        return len(rows), 0

    async def _warm_up(self, platforms: set[Platform]) -> None:
        """A burst starts: connect first. The first sends of a burst would each open a
        connection and reach the platform bunched together after the handshakes, over the
        rate the pace kept when they left."""
        for platform in platforms:
            sender = self.senders[platform]
            if isinstance(sender, WarmsUp):
                await sender.warm_up()

    async def _wait(self, in_flight: set[asyncio.Task[None]], pause: float) -> None:
        if len(in_flight) > REFILL_AT:
            await asyncio.wait(set(in_flight), return_when=asyncio.FIRST_COMPLETED)
        elif pause > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), pause)

    async def _deliver(self, row: Claimed, send_by: datetime) -> None:
        sender = self.senders[row.platform]
        pace = self.paces[row.platform]

        async def turn() -> bool:
            try:
                go = await pace.wait(self._stopping)
            except (SQLAlchemyError, OSError) as exc:  # the shared pace's store: not sent
                log(logger, "delivery.store_error", logging.ERROR, error=str(exc)[:500])
                return False
            return go and self.clock() <= send_by

        try:
            placed = await threads.place(self.engine, sender, row, self.clock())
        except (SQLAlchemyError, OSError) as exc:  # its parent or topic could not be read
            log(logger, "delivery.store_error", logging.ERROR, error=str(exc)[:500])
            await self._give_back(row)
            return
        if isinstance(placed, threads.Placed):
            outcome = await self._send_once(row, sender, turn, placed.payload)
        else:  # a forum topic that could not be opened yet: a 429, a 5xx...
            outcome = placed
        if isinstance(outcome, Rejected) and row.topic is not None:
            outcome = await self._topic_gone(sender, row, outcome)
        if isinstance(outcome, Withheld):
            await self._give_back(row)
            return
        await self._record_durably(row, sender, outcome, send_by + self.lease / 2)
        if self.on_result is not None:
            self.on_result(row, outcome)

    async def _send_once(
        self, row: Claimed, sender: Sender, turn: Turn, payload: Mapping[str, object]
    ) -> Outcome:
        """Send the row, unless a sender that can look finds an earlier attempt arrived."""
        if not isinstance(sender, Reconciles):
            return await sender.send(row.target, payload, turn)
        if row.maybe_sent_since is not None:
            found = await sender.find_sent(row.target, payload, row.key, row.maybe_sent_since)
            if found is not None:
                log(logger, "message.found_sent", row=row.id, external_id=found.external_id)
                return found
        return await sender.send(row.target, sender.tagged(payload, row.key), turn)

    async def _topic_gone(self, sender: Sender, row: Claimed, outcome: Rejected) -> Outcome:
        """A send refused because its forum topic was deleted: retried, in a new topic."""
        if not isinstance(sender, Threads) or not sender.topic_gone(outcome.reason):
            return outcome
        try:
            await threads.forget_topic(self.engine, row)
        except (SQLAlchemyError, OSError) as exc:  # the retry finds the topic gone again
            log(logger, "delivery.store_error", logging.ERROR, error=str(exc)[:500])
        return Transient(f"forum topic gone: {outcome.reason}")

    async def _give_back(self, row: Claimed) -> None:
        """Unsent: stopping, or the row waited past half its lease. Pending again at once."""
        for attempt in range(1, RELEASE_ATTEMPTS + 1):
            try:
                await ledger.release(self.engine, row, self.worker)
                return
            except (SQLAlchemyError, OSError) as exc:  # the lease runs out and frees it anyway
                log(logger, "delivery.store_error", logging.ERROR, error=str(exc)[:500])
                if attempt == RELEASE_ATTEMPTS or not is_outage(exc):
                    return
            await asyncio.sleep(RECORD_RETRY_FIRST_SECONDS * 2**attempt)

    async def _record_durably(
        self, row: Claimed, sender: Sender, outcome: Outcome, lease_end: datetime
    ) -> None:
        """Record a send's result even when the connection drops under the write: the same
        write again, after a doubling wait up to RECORD_RETRY_MAX_SECONDS, for as long as it
        takes, the row's lease renewed meanwhile so that no other sender claims it (a message
        the platform accepted must not leave twice). A stop gives up once the lease has run
        out; the row is then sent again, the duplicate window a kill has too."""
        now = self.clock()  # when the platform answered, whenever the write succeeds
        delay = RECORD_RETRY_FIRST_SECONDS
        for attempt in itertools.count(1):
            try:
                await self._record(row, sender, outcome, now)
                return
            except (SQLAlchemyError, OSError) as exc:
                if not is_outage(exc):
                    raise
                log(
                    logger,
                    "delivery.record_retry",
                    logging.WARNING,
                    row=row.id,
                    outcome=type(outcome).__name__,
                    attempt=attempt,
                    error=str(exc)[:500],
                )
            lease_end = await self._renew(row, lease_end)
            if self._stopping.is_set() and self.clock() >= lease_end:
                log(logger, "delivery.record_lost", logging.ERROR, row=row.id, attempts=attempt)
                return
            await asyncio.sleep(self.rng.uniform(delay / 2, delay))
            delay = min(RECORD_RETRY_MAX_SECONDS, delay * 2)

    async def _renew(self, row: Claimed, lease_end: datetime) -> datetime:
        """Keep the claim of a row whose result is not written yet; when it now ends. A stop
        renews nothing, so that it ends once the lease runs out."""
        if self._stopping.is_set():
            return lease_end
        until = self.clock() + self.lease
        try:
            if await ledger.renew(self.engine, row, self.worker, until):
                return until
        except (SQLAlchemyError, OSError) as exc:
            log(logger, "delivery.store_error", logging.ERROR, error=str(exc)[:500])
        return lease_end

    async def _record(self, row: Claimed, sender: Sender, outcome: Outcome, now: datetime) -> None:
        fields = {"destination": f"{row.platform.value}:{row.target}", "row": row.id}
        match outcome:
            case Sent(external_id):
                pace = now + timedelta(seconds=sender.interval_for(row.target))
                await ledger.mark_sent(self.engine, row, external_id, now, pace)
                log(logger, "message.sent", part=row.part, external_id=external_id, **fields)
            case RetryAfter(seconds):
                wait = min(timedelta(seconds=max(seconds, 1.0)), MAX_RETRY_AFTER)
                await ledger.mark_retry(self.engine, row, outcome, now + wait, worker=self.worker)
                log(logger, "message.retry_after", seconds=wait.total_seconds(), **fields)
            case Transient(reason):  # the request may have gone through: unsure
                wait = timedelta(seconds=backoff(row.attempts, self.rng))
                await ledger.mark_retry(self.engine, row, outcome, now + wait, worker=self.worker)
                log(logger, "message.transient", logging.WARNING, reason=reason, **fields)
            case Blocked():
                await self._blocked(row, outcome, now)
            case Gone(reason):
                await ledger.deactivate(self.engine, row.destination_id, reason, now)
                log(logger, "destination.deactivated", logging.WARNING, reason=reason, **fields)
            case Moved(new_target):
                await ledger.mark_retry(self.engine, row, outcome, now, worker=self.worker)
                log(logger, "destination.moved", new_target=new_target, **fields)
            case Rejected(reason):
                await ledger.mark_failed(self.engine, row, reason, now)
                log(logger, "message.failed", logging.ERROR, reason=reason, **fields)

    async def _blocked(self, row: Claimed, outcome: Blocked, now: datetime) -> None:
        reason = outcome.reason
        if row.consecutive_failures + 1 >= BLOCKED_LIMIT:
            await ledger.deactivate(self.engine, row.destination_id, reason, now)
            log(logger, "destination.deactivated", logging.WARNING, reason=reason, row=row.id)
            return
        wait = timedelta(seconds=backoff(row.attempts, self.rng))
        await ledger.mark_retry(self.engine, row, outcome, now + wait, worker=self.worker)
        log(logger, "message.blocked", logging.WARNING, reason=reason, row=row.id)
