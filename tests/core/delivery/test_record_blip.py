"""A connection dropped while a send's result is written: the message is posted once.

The database drops the connection on exactly the write that records a message as sent (an
engine hook raises the driver's OperationalError there and marks it a disconnect, so the
pooled connection is invalidated as after `pg_terminate_backend`). The Deliverer writes the
result again and keeps the row's claim meanwhile; it never sends the message a second time.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import Iterator, Mapping, Sequence
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event, select
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.delivery import ledger
from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.ledger import unfinished_count
from bot.core.delivery.outbox import plan_digest
from bot.core.delivery.port import Blocked, Outcome, Turn
from bot.core.models import Platform
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.sql.tables import destinations, outbox
from bot.core.store.statuses import RowStatus
from tests.kits.delivery import (
    FakeClock,
    ScriptedSender,
    add_reports,
    channel,
    run_until_idle,
    setup_destinations,
)
from tests.kits.waiting import until

LEASE = timedelta(seconds=60)
DROPPED = "server closed the connection unexpectedly (dropped by the test)"


class DropRecordedSends:
    """Fails the statement that marks an outbox row sent, `times` times or until `heal`."""

    def __init__(self, engine: AsyncEngine, times: int | None) -> None:
        self.engine = engine
        self.left = times
        self.fired = 0
        self.error = engine.dialect.loaded_dbapi.OperationalError

    def heal(self) -> None:
        self.left = 0

    def _before(
        self, _conn: Any, _cursor: Any, statement: str, parameters: Any, *_rest: Any
    ) -> None:
        values = parameters.values() if isinstance(parameters, Mapping) else parameters
        records_sent = statement.startswith("UPDATE outbox SET status") and any(
            v == RowStatus.SENT.value for v in values
        )
        if records_sent and self.left != 0:
            self.fired += 1
            if self.left is not None:
                self.left -= 1
            raise self.error(DROPPED)

    @staticmethod
    def _as_disconnect(context: ExceptionContext) -> None:
        if DROPPED in str(context.original_exception):
            context.is_disconnect = True

    @contextlib.contextmanager
    def installed(self) -> Iterator[DropRecordedSends]:
        sync = self.engine.sync_engine
        event.listen(sync, "before_cursor_execute", self._before)
        event.listen(sync, "handle_error", self._as_disconnect)
        try:
            yield self
        finally:
            event.remove(sync, "before_cursor_execute", self._before)
            event.remove(sync, "handle_error", self._as_disconnect)


async def _plan(store: ReportStore, clock: FakeClock) -> int:
    """One destination's digest; how many messages it has."""
    (dest,) = await setup_destinations(
        store.engine, channel("c", "C0BLIP", platform="slack", max_items=50)
    )
    await add_reports(store, range(1, 31))
    run = await plan_digest(store.engine, dest, clock(), Renderer(), clock())
    assert run.messages >= 2
    return run.messages


async def _rows(store: ReportStore) -> list[tuple[str, int]]:
    query = select(outbox.c.status, outbox.c.attempts).order_by(outbox.c.id)
    async with store.engine.connect() as conn:
        return [(str(r.status), int(r.attempts)) for r in await conn.execute(query)]


def _payloads(sender: ScriptedSender) -> list[object]:
    return [call.payload["text"] for call in sender.calls]


async def test_a_send_recorded_through_a_dropped_connection_is_posted_once(
    store: ReportStore,
) -> None:
    clock = FakeClock()
    messages = await _plan(store, clock)
    sender = ScriptedSender(clock, Platform.SLACK)
    deliverer = Deliverer(store.engine, {sender.platform: sender}, "w", clock, lease=LEASE)
    with DropRecordedSends(store.engine, times=1).installed() as drop:
        await run_until_idle(deliverer, clock, seconds=messages * 3)
    assert drop.fired == 1
    assert len(sender.calls) == messages
    assert len(set(_payloads(sender))) == messages  # each message once
    assert await _rows(store) == [(RowStatus.SENT.value, 1)] * messages


async def test_a_row_whose_result_cannot_be_written_keeps_its_claim(
    store: ReportStore,
) -> None:
    clock = FakeClock()
    messages = await _plan(store, clock)
    sender = ScriptedSender(clock, Platform.SLACK)
    deliverer = Deliverer(store.engine, {sender.platform: sender}, "w", clock, lease=LEASE)
    other = Deliverer(store.engine, {sender.platform: sender}, "w2", clock, lease=LEASE)
    with DropRecordedSends(store.engine, times=None).installed() as drop:
        first = asyncio.create_task(deliverer.run_once())
        await until(lambda: drop.fired >= 2)
        clock.advance(LEASE.total_seconds() * 1.5)  # past the lease the claim started with
        await until(lambda: drop.fired >= 4)  # a renewal ran after the clock moved
        assert await other.run_once() == 0  # the row is still ours: nobody else sends it
        drop.heal()
        assert await first == 1
    assert len(sender.calls) == 1
    while await unfinished_count(store.engine):
        clock.advance(5)
        await other.run_once()
    assert len(set(_payloads(sender))) == len(sender.calls) == messages


async def test_results_written_twice_count_once(store: ReportStore) -> None:
    """A commit whose answer was lost is written again: no second attempt or failure counts."""
    clock = FakeClock()
    await _plan(store, clock)
    (row,) = await ledger.claim(store.engine, "w", clock(), (Platform.SLACK,), 1, LEASE)
    for _ in range(2):
        await ledger.mark_retry(store.engine, row, Blocked("kicked"), clock(), worker="w")
    (row,) = await ledger.claim(store.engine, "w", clock(), (Platform.SLACK,), 1, LEASE)
    for _ in range(2):
        await ledger.mark_sent(store.engine, row, "m1", clock(), clock())
    assert (await _rows(store))[0] == (RowStatus.SENT.value, 2)
    async with store.engine.connect() as conn:
        failures = (await conn.execute(select(destinations.c.consecutive_failures))).scalar()
    assert failures == 0  # one retry counted one failure, the send reset it


class RaisingSender(ScriptedSender):
    async def send(self, target: str, payload: Mapping[str, object], turn: Turn) -> Outcome:
        raise RuntimeError("a sender bug")


async def test_a_failed_send_task_is_logged_not_left_unretrieved(
    store: ReportStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="prdigest.delivery")
    clock = FakeClock()
    await _plan(store, clock)
    loop = asyncio.get_running_loop()
    unretrieved: list[str] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(str(context)))
    try:
        deliverer = Deliverer(
            store.engine, {Platform.SLACK: RaisingSender(clock, Platform.SLACK)}, "w", clock
        )
        task = asyncio.create_task(deliverer.run_forever())
        await until(lambda: _events(caplog.records, "delivery.task_failed"))
        deliverer.stop()
        await task
        del task, deliverer
        gc.collect()
    finally:
        loop.set_exception_handler(previous)
    assert unretrieved == []
    (failed, *_) = _events(caplog.records, "delivery.task_failed")
    assert "a sender bug" in str(getattr(failed, "fields", None))


def _events(records: Sequence[logging.LogRecord], name: str) -> list[logging.LogRecord]:
    return [r for r in records if r.getMessage() == name]
