"""The delivery loop: claims ahead of the pace, gives back what it did not send."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import Mapping
from datetime import datetime, timedelta

from sqlalchemy import select

from bot.core.delivery.deliverer import CLAIM_BATCH, REFILL_AT, Deliverer
from bot.core.delivery.ledger import unfinished_count
from bot.core.delivery.outbox import plan_digest
from bot.core.delivery.port import Outcome, Turn
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.sql.tables import outbox
from bot.core.store.statuses import RowStatus
from tests.kits.delivery import (
    FakeClock,
    ScriptedSender,
    add_reports,
    channel,
    right_away,
    setup_destinations,
)
from tests.kits.waiting import until, until_async

RENDERER = Renderer()
CHANNELS = 60


class JumpingClock(FakeClock):
    """Every reading is `step` seconds after the one before."""

    def __init__(self, step: float) -> None:
        super().__init__()
        self.step = step

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=self.step)
        return self.now


class GatedSender(ScriptedSender):
    """Sends the first `free` messages at once, then holds each until the gate opens."""

    def __init__(self, clock: FakeClock, free: int) -> None:
        super().__init__(clock)
        self.free = free
        self.gate = asyncio.Event()

    async def send(self, target: str, payload: Mapping[str, object], turn: Turn) -> Outcome:
        if self.free > 0:
            self.free -= 1
        else:
            await self.gate.wait()
        return await super().send(target, payload, turn)


async def _plan(store: ReportStore, count: int, clock: FakeClock) -> None:
    dests = await setup_destinations(
        store.engine, *(channel(f"c{i}", f"T{i}") for i in range(count))
    )
    await add_reports(store, range(1, 3))
    for dest in dests:
        await plan_digest(store.engine, dest, clock(), RENDERER, clock())


async def _drained(store: ReportStore) -> None:
    async def empty() -> bool:
        return not await unfinished_count(store.engine)

    await until_async(empty, timeout=10, what="the outbox never drained")


async def _rows(store: ReportStore) -> list[tuple[str, int, object]]:
    query = select(outbox.c.status, outbox.c.attempts, outbox.c.lease_until)
    async with store.engine.connect() as conn:
        return [(str(r.status), int(r.attempts), r.lease_until) for r in await conn.execute(query)]


async def test_the_next_batch_is_claimed_while_the_last_one_is_still_sending(
    store: ReportStore,
) -> None:
    clock = FakeClock()
    await _plan(store, CHANNELS, clock)
    sent_at_once = CLAIM_BATCH - REFILL_AT + 5
    sender = GatedSender(clock, free=sent_at_once)
    deliverer = Deliverer(store.engine, {sender.platform: sender}, "w", clock)
    task = asyncio.create_task(deliverer.run_forever())
    try:
        # Most of the first batch is sent, the rest of it is stuck: the loop must claim the
        # remaining rows behind it instead of waiting for the whole batch to finish.
        want = {"sent": sent_at_once, "sending": CHANNELS - sent_at_once}

        async def claimed_behind() -> bool:
            return Counter(s for s, _, _ in await _rows(store)) == want

        await until_async(claimed_behind, timeout=10, what=f"the rows never stood at {want}")
    finally:
        sender.gate.set()
        await _drained(store)
        deliverer.stop()
        await task
    assert sorted(c.target for c in sender.calls) == sorted(f"T{i}" for i in range(CHANNELS))


async def test_rows_still_waiting_for_their_turn_at_stop_are_given_back_unsent(
    store: ReportStore,
) -> None:
    clock = FakeClock()
    await _plan(store, CHANNELS, clock)
    sender = ScriptedSender(clock, max_per_second=20.0)
    deliverer = Deliverer(store.engine, {sender.platform: sender}, "w", clock)
    task = asyncio.create_task(deliverer.run_forever())
    await until(lambda: len(sender.calls) >= 3)
    deliverer.stop()
    await task
    rows = await _rows(store)
    unsent = [(attempts, lease) for status, attempts, lease in rows if status != "sent"]
    sent = len(rows) - len(unsent)
    assert sent == len(sender.calls) and 3 <= sent < CHANNELS
    assert set(unsent) == {(0, None)}  # pending again, no attempt counted, no lease held
    assert {s for s, _, _ in rows} == {RowStatus.SENT.value, RowStatus.PENDING.value}
    # Another worker picks up exactly the rest.
    other = Deliverer(store.engine, {sender.platform: sender}, "w2", clock)
    while await other.run_once():
        pass
    assert sorted(c.target for c in sender.calls) == sorted(f"T{i}" for i in range(CHANNELS))


async def test_a_row_that_waited_past_half_its_lease_is_given_back_not_sent(
    store: ReportStore,
) -> None:
    clock = FakeClock()
    await _plan(store, 1, clock)
    sender = ScriptedSender(clock)
    lease = timedelta(seconds=60)
    # Each reading of this clock is 31 s after the last: the row's turn comes after lease / 2.
    late = Deliverer(store.engine, {sender.platform: sender}, "w", JumpingClock(31), lease=lease)
    assert await late.run_once() == 1
    assert sender.calls == []
    assert [(s, a) for s, a, _ in await _rows(store)] == [(RowStatus.PENDING.value, 0)]
    on_time = Deliverer(store.engine, {sender.platform: sender}, "w", clock, lease=lease)
    assert await on_time.run_once() == 1
    assert len(sender.calls) == 1


class AdmittingSender(ScriptedSender):
    """Holds every send at its own gate (like Telegram's arrival window) before asking for its
    turn; records, in real time, when each turn came."""

    def __init__(self, clock: FakeClock, rate: float) -> None:
        super().__init__(clock, max_per_second=rate)
        self.gate = asyncio.Event()
        self.turns: list[float] = []

    async def send(self, target: str, payload: Mapping[str, object], turn: Turn) -> Outcome:
        await self.gate.wait()
        if await turn():
            self.turns.append(asyncio.get_running_loop().time())
        return await super().send(target, payload, right_away)


async def test_turns_held_up_inside_a_sender_still_leave_at_the_pace(store: ReportStore) -> None:
    # Taken before the sender's own gate, the turns of every held row would run out while
    # they wait there, and all of them would leave together when it opens: a burst over the
    # platform's rate, which no replica's pace would know about.
    clock = FakeClock()
    rate, held = 10.0, 6
    await _plan(store, held, clock)
    sender = AdmittingSender(clock, rate)
    deliverer = Deliverer(store.engine, {sender.platform: sender}, "w", clock)
    task = asyncio.create_task(deliverer.run_forever())
    try:
        await asyncio.sleep(held / rate)  # long enough for every row's turn to have passed
        sender.gate.set()
        await _drained(store)
    finally:
        deliverer.stop()
        await task
    assert len(sender.turns) == held
    gaps = [b - a for a, b in itertools.pairwise(sender.turns)]
    assert min(gaps) >= 0.5 / rate, f"turns bunched after the gate opened: {gaps}"
