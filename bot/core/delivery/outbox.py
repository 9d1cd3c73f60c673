"""Digest runs: planned once per (destination, fire time), their messages queued.

A destination holds any number of subscriptions. The scheduler hands over, per destination and
tick, the subscriptions that are due; they are planned as one run, so a PR that several of them
match appears once, its entry saying which (`matched: breaking, rollout`). Each subscription's
part is a `run_members` row unique on (subscription, its fire time): every replica may fire the
same cron, one plan wins. The winner selects what is new since each subscription's watermark,
builds the digest and queues one outbox row per message, all in the same transaction (which
holds the destinations' rows on PostgreSQL, so replicas plan a destination one at a time).
Senders claim rows in order per destination, and each result is committed at once
(`bot/core/delivery/ledger.py`). A subscription's watermark advances only when every message of
its run has reached a final state, so a restart resumes the rendered rows and never recomputes.

A tick plans its destinations PLAN_BATCH at a time, one transaction each, in a few statements
per batch (`bot/core/delivery/runs.py`), and renders each audience once: destinations whose
digests are alike share an edition (`bot/core/delivery/editions.py`), stored once. A batch that
fails for anything but an outage is planned again one destination at a time: a destination
whose digest cannot be planned is recorded and tried again later, and the others go on
(`bot/core/delivery/plan_failures.py`).

A `now` subscription is due at every tick and takes part only when something new matches; the
PRs it posts are remembered (`instant_posts`), and a later digest in the same destination
refers to that post ("posted 14:02") instead of repeating it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.delivery.editions import Pending
from bot.core.delivery.plan_failures import clear_plan_failures, plan_isolated
from bot.core.delivery.reading import DEFAULT_READING, ReadingPolicy
from bot.core.delivery.runs import (
    NOT_PLANNED,
    PLATFORM_FORMAT,
    Due,
    PlannedRun,
    Run,
    advance_watermarks,
    covered_seq,
    take_parts,
    write_runs,
)
from bot.core.delivery.steps import build, failed_before, pick, read_facts
from bot.core.delivery.tick_plan import TickPlan
from bot.core.models import Format
from bot.core.render.renderer import Renderer
from bot.core.store.editions import PAYLOAD
from bot.core.store.reports import WindowCache
from bot.core.store.sql.db import redoable_write_transaction, writers_run_at_once
from bot.core.store.sql.tables import outbox
from bot.core.store.subscriptions import Subscription

__all__ = [
    "PLATFORM_FORMAT",
    "Due",
    "PlannedRun",
    "TickPlan",
    "covered_seq",
    "plan_digest",
    "plan_pages",
    "plan_run",
    "rehearse_run",
]

PLAN_BATCH = 1000  # destinations planned per transaction
PG_LANES = 2  # batches planned at once on PostgreSQL


async def plan_runs(
    engine: AsyncEngine,
    due: Mapping[int, Sequence[Due]],
    tick: TickPlan,
    batch: int = PLAN_BATCH,
) -> dict[int, PlannedRun]:
    """Plan the due subscriptions of each destination as one run, once across replicas,
    `batch` destinations per transaction; `tick` shares the reports read and the editions
    rendered among them (and among the calls of one scheduler tick)."""
    results = {destination: NOT_PLANNED for destination in due}

    async def one_page() -> AsyncIterator[Mapping[int, Sequence[Due]]]:
        yield due

    await plan_pages(engine, one_page(), tick, lambda _, runs: results.update(runs), batch)
    return results


Planned = Callable[[Mapping[int, Sequence[Due]], Mapping[int, PlannedRun]], None]


async def plan_pages(
    engine: AsyncEngine,
    pages: AsyncIterator[Mapping[int, Sequence[Due]]],
    tick: TickPlan,
    planned: Planned,
    batch: int = PLAN_BATCH,
) -> None:
    """`plan_runs` over pages of due destinations, `planned(due, runs)` told after each batch.
    On PostgreSQL, PG_LANES batches are planned at once: one is prepared here while the
    server writes another (the batches hold disjoint destinations, locked in id order). The
    lanes take batches across pages: none waits for the others at the end of a page."""
    source = _batches(pages, batch, planned)
    taking = asyncio.Lock()  # one lane at a time asks the source (a page may be read then)

    async def lane() -> None:
        while True:
            async with taking:
                items = await anext(source, None)
            if items is None:
                return
            runs = await plan_isolated(
                engine, items, lambda runs: _plan_batch(engine, runs, tick), tick.book.renderer,
                tick.now,
            )  # fmt: skip
            planned(dict(items), {run.destination_id: run.result for run in runs})
            await asyncio.sleep(0)  # let acks and sends run between batches

    lanes = [lane() for _ in range(PG_LANES if writers_run_at_once(engine) else 1)]
    tasks = [asyncio.ensure_future(running) for running in lanes]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        await source.aclose()


async def _batches(
    pages: AsyncIterator[Mapping[int, Sequence[Due]]], size: int, planned: Planned
) -> AsyncGenerator[list[tuple[int, Sequence[Due]]], None]:
    """The pages' destinations in batches of `size`, each page's in id order (one with
    nothing due is told as not planned at once)."""
    async for due in pages:
        idle = {destination: items for destination, items in due.items() if not items}
        if idle:
            planned(idle, dict.fromkeys(idle, NOT_PLANNED))
        todo = sorted((destination, items) for destination, items in due.items() if items)
        for first in range(0, len(todo), size):
            yield todo[first : first + size]


async def _plan_batch(engine: AsyncEngine, runs: Sequence[Run], tick: TickPlan) -> None:
    """One batch in one transaction; its editions serve later batches once it committed."""
    pending: Pending = {}
    async with redoable_write_transaction(engine) as conn:  # a plan lost is planned again
        await _plan_in(conn, runs, tick, pending)
    tick.book.committed(pending)


async def _plan_in(
    conn: AsyncConnection, runs: Sequence[Run], tick: TickPlan, pending: Pending
) -> None:
    # Planning a destination that failed before ends its streak (undone if this fails too).
    await clear_plan_failures(conn, failed_before(runs))
    await take_parts(conn, runs, tick.floors)
    live = [run for run in runs if run.parts]
    if not live:
        return
    facts = await read_facts(conn, live, tick)
    await advance_watermarks(conn, await pick(live, tick, facts))
    live = [run for run in live if run.parts]
    if not live:
        return
    posting = await build(live, tick, facts)
    await tick.book.assign(conn, posting, facts.layouts, pending)
    await write_runs(conn, live, tick.now)


async def plan_run(
    engine: AsyncEngine,
    destination_id: int,
    due: Sequence[Due],
    renderer: Renderer,
    now: datetime,
    windows: WindowCache | None = None,
    reading: ReadingPolicy = DEFAULT_READING,
) -> PlannedRun:
    """Plan the due subscriptions of one destination as one run, once across replicas."""
    tick = TickPlan(renderer, now, windows, reading)
    return (await plan_runs(engine, {destination_id: due}, tick))[destination_id]


async def rehearse_run(
    conn: AsyncConnection,
    destination_id: int,
    due: Sequence[Due],
    renderer: Renderer,
    now: datetime,
    reading: ReadingPolicy = DEFAULT_READING,
    fmt: Format | None = None,
) -> list[dict[str, Any]]:
    """Plan one destination's run in `conn`, a transaction the caller rolls back (a dry run),
    exactly as delivery plans it, and return the payloads its outbox rows would send, in
    sending order (`fmt`: render them in another format than the platform's)."""
    tick = TickPlan(renderer, now, reading=reading, fmt=fmt)
    run = Run(destination_id, due)
    await _plan_in(conn, [run], tick, {})
    if run.result.run_id is None or not run.messages:
        return []
    rows = await conn.execute(
        select(PAYLOAD).where(outbox.c.run_id == run.result.run_id).order_by(outbox.c.id)
    )
    return [dict(payload) for payload in rows.scalars()]


async def plan_digest(
    engine: AsyncEngine,
    sub: Subscription,
    scheduled_for: datetime,
    renderer: Renderer,
    now: datetime,
    windows: WindowCache | None = None,
    reading: ReadingPolicy = DEFAULT_READING,
    synthesis: bool = False,
) -> PlannedRun:
    """One subscription's run for `scheduled_for` (a destination with one due subscription);
    `synthesis`: its cadence is longer than a day (the scheduler says which)."""
    due = [Due(sub, scheduled_for, synthesis)]
    return await plan_run(engine, sub.destination_id, due, renderer, now, windows, reading)
