"""Planning many destinations at once: one edition per audience, a few statements per batch,
and replicas racing over the same tick still plan each destination once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

import pytest
from sqlalchemy import String, cast, event, func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

import bot.core.delivery.editions as editions_module
from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.editions import Edition
from bot.core.delivery.outbox import Due, TickPlan, plan_runs
from bot.core.render.renderer import Renderer
from bot.core.store.editions import PAYLOAD, new_editions
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine
from bot.core.store.sql.tables import digest_runs, edition_messages, editions, outbox, run_members
from bot.core.store.subscriptions import Subscription
from tests.kits.delivery import (
    FakeClock,
    ScriptedSender,
    add_reports,
    channel,
    run_until_idle,
    setup_destinations,
)

RENDERER = Renderer()
VERL = "verl-project/verl"


def _due(subs: Sequence[Subscription], at: datetime) -> dict[int, list[Due]]:
    return {sub.destination_id: [Due(sub, at)] for sub in subs}


async def _count(engine: AsyncEngine, table: object) -> int:
    async with engine.connect() as conn:
        query = select(func.count()).select_from(table)  # type: ignore[arg-type]
        return int((await conn.execute(query)).scalar_one())


@contextmanager
def _statements(engine: AsyncEngine) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(*args: object) -> None:
        seen.append(str(args[2]))

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)


async def test_destinations_with_one_audience_share_one_rendered_edition(
    store: ReportStore,
) -> None:
    clock = FakeClock()
    alike = [channel(f"c{i}", f"T{i}", repos=[VERL]) for i in range(4)]  # title: the repo
    other = channel("zh", "Z", repos=[VERL], locale="zh")
    subs = await setup_destinations(store.engine, *alike, other)
    await add_reports(store, range(1, 6))
    planned = await plan_runs(store.engine, _due(subs, clock()), TickPlan(RENDERER, clock()))
    assert all(run.created and run.messages for run in planned.values())
    assert await _count(store.engine, editions) == 2  # the English four, the Chinese one
    async with store.engine.connect() as conn:
        own = await conn.execute(select(func.count()).where(outbox.c.payload.is_not(None)))
        assert own.scalar_one() == 0  # every row sends its edition's message
        stored = (await conn.execute(select(func.count()).select_from(edition_messages))).scalar()
    rows = sum(run.messages for run in planned.values())
    assert await _count(store.engine, outbox) == rows > int(stored or 0)
    sender = ScriptedSender(clock)
    await run_until_idle(Deliverer(store.engine, {sender.platform: sender}, "w", clock), clock, 5)
    texts = {call.target: str(call.payload["text"]) for call in sender.calls}
    assert len(sender.calls) == rows
    assert len({texts[f"T{i}"] for i in range(4)}) == 1 and texts["Z"] != texts["T0"]
    assert "one-liner 5" in texts["T0"]


async def test_editions_written_a_slice_at_a_time_each_send_their_own_digest(
    store: ReportStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch writes its editions FILL_EVERY at a time (bounded memory): every destination
    still gets its own audience's digest, and each edition's messages are all there."""
    monkeypatch.setattr(editions_module, "FILL_EVERY", 2)
    clock = FakeClock()
    tags = ["rollout", "fix", "ci", "perf", "docs"]
    subs = await setup_destinations(
        store.engine, *(channel(tag, f"T{i}", tags=[tag]) for i, tag in enumerate(tags))
    )
    await add_reports(store, range(1, 11), tags=tags)
    planned = await plan_runs(store.engine, _due(subs, clock()), TickPlan(RENDERER, clock()))
    assert await _count(store.engine, editions) == len(tags)
    rows = sum(run.messages for run in planned.values())
    sender = ScriptedSender(clock)
    await run_until_idle(Deliverer(store.engine, {sender.platform: sender}, "w", clock), clock, 5)
    assert len(sender.calls) == rows
    texts = {call.target: str(call.payload["text"]) for call in sender.calls}
    assert len(set(texts.values())) == len(tags)  # each its own audience's edition
    assert all(f"[{tag}]" in texts[f"T{i}"] for i, tag in enumerate(tags))


async def test_edition_payloads_and_more_lists_are_stored_as_json_text(store: ReportStore) -> None:
    """The planner hands SQLite the JSON as UTF-8 bytes: it is stored as text (a BLOB would
    read back the same in Python, but not in SQL), a Chinese character as itself."""
    clock = FakeClock()
    subs = await setup_destinations(store.engine, channel("zh", "Z", locale="zh", max_items=1))
    await add_reports(store, range(1, 6))
    await plan_runs(store.engine, _due(subs, clock()), TickPlan(RENDERER, clock()))
    m, e = edition_messages, editions
    async with store.engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            kinds = (await conn.execute(select(func.typeof(m.c.payload)))).scalars().all()
            more = await conn.execute(select(func.typeof(e.c.more)).where(e.c.more_count > 0))
            assert set(kinds) | set(more.scalars()) == {"text"}
        texts = (await conn.execute(select(cast(m.c.payload, String)))).scalars().all()
        listed = (await conn.execute(select(cast(e.c.more, String)))).scalar_one()
    assert texts and all(json.loads(text)["text"] for text in texts)
    assert "标签" in texts[0] and "\\u" not in texts[0]
    assert len(json.loads(listed)) == 4  # the four PRs behind "+4 more"


async def test_a_batch_costs_a_few_statements_however_many_destinations_it_holds(
    store: ReportStore,
) -> None:
    clock = FakeClock()
    subs = await setup_destinations(
        store.engine, *(channel(f"c{i}", f"T{i}", repos=[VERL]) for i in range(120))
    )
    await add_reports(store, range(1, 4))
    with _statements(store.engine) as few:
        await plan_runs(store.engine, _due(subs[:20], clock()), TickPlan(RENDERER, clock()))
    with _statements(store.engine) as many:
        await plan_runs(store.engine, _due(subs[20:], clock()), TickPlan(RENDERER, clock()))
    assert await _count(store.engine, digest_runs) == 120
    assert await _count(store.engine, run_members) == 120
    # Five times the destinations, the same statements (no edition to render the second time
    # round would only make it fewer; one more window read at most).
    assert len(many) <= len(few) + 2, many


async def test_replicas_planning_the_same_tick_at_once_plan_each_destination_once(
    store: ReportStore, database_url: str
) -> None:
    clock = FakeClock()
    subs = await setup_destinations(
        store.engine, *(channel(f"c{i}", f"T{i}", repos=[VERL]) for i in range(30))
    )
    await add_reports(store, range(1, 4))
    engines = [create_engine(database_url) for _ in range(3)]
    try:
        results = await asyncio.gather(
            *(
                plan_runs(engine, _due(subs, clock()), TickPlan(RENDERER, clock()), batch=7)
                for engine in engines
            )
        )
    finally:
        for engine in engines:
            await engine.dispose()
    created = [run for planned in results for run in planned.values() if run.created]
    assert len(created) == 30 == await _count(store.engine, digest_runs)
    assert await _count(store.engine, outbox) == sum(run.messages for run in created)
    async with store.engine.connect() as conn:
        payloads = (await conn.execute(select(PAYLOAD))).scalars().all()
    assert payloads and all(payload and payload.get("text") for payload in payloads)


async def test_a_batch_keeps_the_editions_it_found_while_another_starts_the_memo_over(
    store: ReportStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL two batches are planned at once: one may commit (and start the edition
    memo over) while the other awaits the database between finding its editions and using
    them. Here that other batch's commit happens inside the await, every time."""
    monkeypatch.setattr("bot.core.delivery.editions.MEMO_MAX", 1)
    clock = FakeClock()
    alike = [channel(f"c{i}", f"T{i}", repos=[VERL]) for i in range(2)]
    other = channel("c2", "T2", repos=[VERL], max_items=2)  # an audience of its own
    first, second, third = await setup_destinations(store.engine, *alike, other)
    await add_reports(store, range(1, 6))
    tick = TickPlan(RENDERER, clock())

    async def another_batch_commits_meanwhile(conn: AsyncConnection, count: int) -> list[int]:
        stranger = Edition(0, (), ())
        tick.book.committed({"elsewhere": stranger, "and more": stranger})  # past MEMO_MAX
        return await new_editions(conn, count)

    await plan_runs(store.engine, _due([first], clock()), tick)
    monkeypatch.setattr(editions_module, "new_editions", another_batch_commits_meanwhile)
    planned = await plan_runs(store.engine, _due([second, third], clock()), tick)
    assert all(run.created and run.messages for run in planned.values())
    assert await _count(store.engine, editions) == 2  # the second chat reused the first's
