"""Digest runs and the outbox: once per (destination, time), nothing lost, nothing twice."""

from __future__ import annotations

import asyncio
import itertools
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Table, func, select

import bot.core.store.reports as reports_module
from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.ledger import unfinished_count
from bot.core.delivery.outbox import plan_digest
from bot.core.delivery.port import Blocked, Gone, Moved, Rejected, RetryAfter, Transient
from bot.core.render.renderer import Renderer
from bot.core.store.editions import PAYLOAD
from bot.core.store.reports import ReportStore, WindowCache
from bot.core.store.sql.tables import digest_runs, outbox
from bot.core.store.statuses import RunStatus
from bot.core.store.subscriptions import SubscriptionStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from tests.kits.delivery import (
    FakeClock,
    ScriptedSender,
    add_reports,
    channel,
    newest_seq_of,
    report,
    run_until_idle,
    setup_destinations,
)

RENDERER = Renderer()


def _deliverer(store: ReportStore, sender: ScriptedSender, clock: FakeClock) -> Deliverer:
    return Deliverer(store.engine, {sender.platform: sender}, "test-worker", clock)


async def _count(store: ReportStore, table: Table) -> int:
    async with store.engine.connect() as conn:
        return int((await conn.execute(select(func.count()).select_from(table))).scalar_one())


async def test_a_run_is_planned_once_per_destination_and_time(store: ReportStore) -> None:
    clock = FakeClock()
    [dest] = await setup_destinations(store.engine, channel("a", "A"))
    await add_reports(store, range(1, 4))
    first = await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    again = await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    assert first.created and first.entries == 3 and first.messages >= 1
    assert not again.created
    assert await _count(store, digest_runs) == 1
    assert await _count(store, outbox) == first.messages


async def test_every_message_is_delivered_once_and_the_watermark_advances(
    store: ReportStore,
) -> None:
    clock = FakeClock()
    sender = ScriptedSender(clock)
    [dest] = await setup_destinations(store.engine, channel("a", "A"))
    await add_reports(store, range(1, 6))
    run = await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    await run_until_idle(_deliverer(store, sender, clock), clock, 10)
    assert len(sender.calls) == run.messages
    assert "one-liner 5" in "".join(str(c.payload["text"]) for c in sender.calls)
    refreshed = await SubscriptionStore(store.engine).get(dest.id)
    assert refreshed is not None and refreshed.watermark == await newest_seq_of(store)
    clock.advance(3600)
    later = await plan_digest(store.engine, refreshed, clock(), RENDERER, clock())
    assert later.status is RunStatus.EMPTY and later.messages == 0


async def test_retry_after_reschedules_only_that_destination(store: ReportStore) -> None:
    clock = FakeClock()
    sender = ScriptedSender(clock)
    sender.scripts["A"] = [RetryAfter(7), RetryAfter(7), RetryAfter(7)]
    dests = await setup_destinations(store.engine, channel("a", "A"), channel("b", "B"))
    await add_reports(store, range(1, 4))
    for dest in dests:
        await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    await run_until_idle(_deliverer(store, sender, clock), clock, 60, step=0.5)
    attempts = [c.at for c in sender.to("A")]
    assert len(attempts) == 4
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(attempts)]
    assert all(gap >= 7 for gap in gaps), gaps
    b_calls = sender.to("B")
    assert b_calls and b_calls[0].at < attempts[1], "B kept flowing while A waited"
    assert await unfinished_count(store.engine) == 0


async def test_server_errors_back_off_and_the_message_still_arrives(store: ReportStore) -> None:
    clock = FakeClock()
    sender = ScriptedSender(clock)
    sender.scripts["A"] = [Transient("HTTP 503")] * 5
    [dest] = await setup_destinations(store.engine, channel("a", "A"))
    await add_reports(store, [1])
    await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    await run_until_idle(_deliverer(store, sender, clock), clock, 3 * 3600, step=30)
    calls = sender.to("A")
    assert len(calls) == 6
    gaps = [(b.at - a.at).total_seconds() for a, b in itertools.pairwise(calls)]
    assert gaps == sorted(gaps) or max(gaps) <= 600, "backoff grows, bounded"
    assert max(gaps) <= 600 + 30
    assert await unfinished_count(store.engine) == 0


async def test_a_gone_destination_is_deactivated_with_its_reason(store: ReportStore) -> None:
    clock = FakeClock()
    sender = ScriptedSender(clock)
    sender.scripts["A"] = [Gone("channel_not_found")]
    [dest] = await setup_destinations(store.engine, channel("a", "A"))
    await add_reports(store, range(1, 3))
    await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    await run_until_idle(_deliverer(store, sender, clock), clock, 30)
    refreshed = await SubscriptionStore(store.engine).get(dest.id)
    assert refreshed is not None
    assert not refreshed.active
    assert refreshed.deactivated_reason == "channel_not_found"
    assert len(sender.calls) == 1
    clock.advance(86400)
    await add_reports(store, [3])
    await run_until_idle(_deliverer(store, sender, clock), clock, 10)
    assert len(sender.calls) == 1, "no sends to a deactivated destination"


async def test_blocked_five_times_in_a_row_deactivates(store: ReportStore) -> None:
    clock = FakeClock()
    sender = ScriptedSender(clock)
    sender.scripts["A"] = [Blocked("Forbidden: bot was blocked by the user")] * 10
    [dest] = await setup_destinations(store.engine, channel("a", "A"))
    await add_reports(store, [1])
    await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    await run_until_idle(_deliverer(store, sender, clock), clock, 4 * 3600, step=10)
    assert len(sender.to("A")) == 5
    refreshed = await SubscriptionStore(store.engine).get(dest.id)
    assert refreshed is not None and not refreshed.active
    assert "blocked" in (refreshed.deactivated_reason or "")


async def test_a_success_resets_the_blocked_count(store: ReportStore) -> None:
    clock = FakeClock()
    sender = ScriptedSender(clock)
    blocked = Blocked("Forbidden: bot was kicked from the group chat")
    sender.scripts["A"] = [blocked] * 4
    [dest] = await setup_destinations(store.engine, channel("a", "A"))
    await add_reports(store, [1])
    await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    await run_until_idle(_deliverer(store, sender, clock), clock, 3 * 3600, step=10)
    refreshed = await DestinationStore(store.engine).get(dest.destination_id)
    assert refreshed is not None and refreshed.active
    assert refreshed.consecutive_failures == 0


async def test_a_migrated_chat_moves_and_gets_the_message_there(store: ReportStore) -> None:
    clock = FakeClock()
    sender = ScriptedSender(clock)
    sender.scripts["-100"] = [Moved("-1009999")]
    [dest] = await setup_destinations(store.engine, channel("g", "-100"))
    await add_reports(store, [1])
    run = await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    await run_until_idle(_deliverer(store, sender, clock), clock, 10)
    assert [c.target for c in sender.calls] == ["-100"] + ["-1009999"] * run.messages
    refreshed = await SubscriptionStore(store.engine).get(dest.id)
    assert refreshed is not None and refreshed.target == "-1009999"


async def test_a_rejected_message_is_failed_and_reported_not_retried(store: ReportStore) -> None:
    clock = FakeClock()
    sender = ScriptedSender(clock)
    sender.scripts["A"] = [Rejected("invalid_blocks")]
    [dest] = await setup_destinations(store.engine, channel("a", "A"))
    await add_reports(store, [1])
    await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    await run_until_idle(_deliverer(store, sender, clock), clock, 30)
    assert len(sender.calls) == 1
    async with store.engine.connect() as conn:
        row = (await conn.execute(select(outbox.c.status, outbox.c.last_error))).one()
        run_status = (await conn.execute(select(digest_runs.c.status))).scalar_one()
    assert (row.status, row.last_error) == ("failed", "invalid_blocks")
    assert run_status == RunStatus.PARTIAL.value


async def test_an_unfinished_run_is_resumed_not_recomputed(store: ReportStore) -> None:
    clock = FakeClock()
    sender = ScriptedSender(clock)
    sender.scripts["A"] = [RetryAfter(3600)]
    [dest] = await setup_destinations(store.engine, channel("a", "A"))
    await add_reports(store, range(1, 4))
    first = await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    await run_until_idle(_deliverer(store, sender, clock), clock, 5)
    await add_reports(store, [4])
    clock.advance(60)
    second = await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    assert second.entries == 1, "the second run holds only the report that arrived since"
    clock.advance(3600)
    await run_until_idle(_deliverer(store, sender, clock), clock, 30)
    texts = [str(c.payload["text"]) for c in sender.calls[1:]]
    assert len(texts) == first.messages + second.messages
    joined = "\n".join(texts)
    for n in range(1, 5):
        assert joined.count(f"one-liner {n}") == 1


async def test_a_report_updated_after_a_digest_shows_again(store: ReportStore) -> None:
    clock = FakeClock()
    sender = ScriptedSender(clock)
    [dest] = await setup_destinations(store.engine, channel("a", "A"))
    await add_reports(store, [1, 2])
    await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    await run_until_idle(_deliverer(store, sender, clock), clock, 5)
    await add_reports(store, [2], summary="a corrected one-liner")
    clock.advance(86400)
    refreshed = await SubscriptionStore(store.engine).get(dest.id)
    assert refreshed is not None
    run = await plan_digest(store.engine, refreshed, clock(), RENDERER, clock())
    assert run.entries == 1
    await run_until_idle(_deliverer(store, sender, clock), clock, 5)
    assert "a corrected one-liner" in str(sender.calls[-1].payload["text"])


@pytest.mark.parametrize("post_empty", [False, True])
async def test_an_empty_window_posts_only_when_asked(store: ReportStore, post_empty: bool) -> None:
    clock = FakeClock()
    [dest] = await setup_destinations(store.engine, channel("a", "A", post_empty=post_empty))
    run = await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    assert (run.messages > 0) is post_empty


async def test_expired_lease_is_taken_over(store: ReportStore) -> None:
    from bot.core.delivery.ledger import claim

    clock = FakeClock()
    [dest] = await setup_destinations(store.engine, channel("a", "A"))
    await add_reports(store, [1])
    await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    lease = timedelta(seconds=60)
    from bot.core.models import Platform

    taken = await claim(store.engine, "dead", clock(), (Platform.CONSOLE,), 10, lease)
    assert len(taken) == 1
    assert await claim(store.engine, "other", clock(), (Platform.CONSOLE,), 10, lease) == []
    clock.advance(61)
    again = await claim(store.engine, "other", clock(), (Platform.CONSOLE,), 10, lease)
    assert [r.id for r in again] == [taken[0].id]


async def test_a_huge_backlog_is_capped_to_the_newest_reports(
    store: ReportStore, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import bot.core.delivery.tick_plan

    monkeypatch.setattr(bot.core.delivery.tick_plan, "WINDOW_LIMIT", 3)
    clock = FakeClock()
    [dest] = await setup_destinations(store.engine, channel("a", "A"))
    await add_reports(store, range(1, 6))
    run = await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    assert run.entries == 3
    sender = ScriptedSender(clock)
    await run_until_idle(_deliverer(store, sender, clock), clock, 5)
    text = "".join(str(c.payload["text"]) for c in sender.calls)
    assert "one-liner 5" in text and "one-liner 1" not in text
    assert "digest.window_capped" in caplog.text
    refreshed = await SubscriptionStore(store.engine).get(dest.id)
    assert refreshed is not None and refreshed.watermark == await newest_seq_of(store)


async def _planned_payloads(store: ReportStore, dest_id: int) -> list[str]:
    async with store.engine.connect() as conn:
        rows = await conn.execute(
            select(PAYLOAD).where(outbox.c.destination_id == dest_id).order_by(outbox.c.id)
        )
        return [str(payload["text"]) for (payload,) in rows]


def _count_window_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One item per window read from the store (store/reports.reports_after)."""
    reads: list[int] = []
    read = reports_module.reports_after

    async def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(1)
        return await read(*args, **kwargs)

    monkeypatch.setattr(reports_module, "reports_after", counted)
    return reads


async def test_one_tick_reads_a_shared_window_once_and_plans_the_same_digests(
    store: ReportStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock()
    targets = ["A", "B", "C", "D"]
    dests = await setup_destinations(store.engine, *(channel(t.lower(), t) for t in targets))
    await add_reports(store, range(1, 6))
    windows = WindowCache()
    reads = _count_window_reads(monkeypatch)
    for dest in dests[:2]:
        await plan_digest(store.engine, dest, clock(), RENDERER, clock(), windows)
    assert len(reads) == 1
    for dest in dests[2:]:
        await plan_digest(store.engine, dest, clock(), RENDERER, clock())  # no cache
    assert len(reads) == 3
    # the same messages, but for the title line (each destination's own name)
    bodies = [[t.split("\n", 1)[1] for t in await _planned_payloads(store, d.id)] for d in dests]
    assert bodies[0] and all(body == bodies[0] for body in bodies)


async def test_batches_that_ask_for_a_window_together_share_one_read(
    store: ReportStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL plans two batches at once: both ask for the window before either has it.
    One reads; the other gets the same report objects (what the tick's picks, digests and
    rendered entries are keyed by)."""
    await add_reports(store, range(1, 6))
    windows = WindowCache()
    reads = _count_window_reads(monkeypatch)

    async def ask() -> list[Any]:
        async with store.engine.connect() as conn:
            return await windows.after(conn, 0)

    first, second = await asyncio.gather(ask(), ask())
    assert len(reads) == 1
    assert first is second and len(first) == 5


async def test_a_cached_window_is_read_again_once_a_report_arrives_or_changes(
    store: ReportStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock()
    a, b, c = await setup_destinations(
        store.engine, channel("a", "A"), channel("b", "B"), channel("c", "C")
    )
    await add_reports(store, [1, 2])
    windows = WindowCache()
    reads = _count_window_reads(monkeypatch)
    first = await plan_digest(store.engine, a, clock(), RENDERER, clock(), windows)
    await add_reports(store, [3])  # arrives in the middle of the tick
    second = await plan_digest(store.engine, b, clock(), RENDERER, clock(), windows)
    await add_reports(store, [1], summary="a corrected one-liner")  # updated: a new seq
    third = await plan_digest(store.engine, c, clock(), RENDERER, clock(), windows)
    assert (first.entries, second.entries, third.entries) == (2, 3, 3)
    assert len(reads) == 3
    assert "one-liner 3" in "".join(await _planned_payloads(store, b.id))
    assert "a corrected one-liner" in "".join(await _planned_payloads(store, c.id))


async def test_destinations_at_different_watermarks_each_get_their_own_window(
    store: ReportStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock()
    sender = ScriptedSender(clock)
    early, late = await setup_destinations(store.engine, channel("a", "A"), channel("b", "B"))
    await add_reports(store, [1, 2])
    await plan_digest(store.engine, late, clock(), RENDERER, clock())
    await run_until_idle(_deliverer(store, sender, clock), clock, 5)  # B is past 1 and 2
    await add_reports(store, [3])
    clock.advance(86400)
    windows = WindowCache()
    reads = _count_window_reads(monkeypatch)
    late_now = await SubscriptionStore(store.engine).get(late.id)
    assert late_now is not None
    runs = [
        await plan_digest(store.engine, dest, clock(), RENDERER, clock(), windows)
        for dest in (early, late_now, early)
    ]
    assert [run.entries for run in runs[:2]] == [3, 1]
    assert not runs[2].created  # the same (destination, time): planned once
    assert len(reads) == 2


async def test_a_time_term_in_a_channel_query_counts_from_the_runs_scheduled_time(
    store: ReportStore,
) -> None:
    """`since:1d` means the day before the digest's own time, so replicas (and a run planned
    late, on catch-up) choose the same reports whatever the wall clock says."""
    clock = FakeClock()  # 2026-09-01 01:00 UTC, months before the wall clock
    [dest] = await setup_destinations(store.engine, channel("a", "A", query="since:1d"))
    fresh = report(1).model_copy(update={"merged_at": clock() - timedelta(hours=12)})
    stale = report(2).model_copy(update={"merged_at": clock() - timedelta(days=3)})
    await store.upsert_many([(fresh, ""), (stale, "")])
    run = await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    assert run.entries == 1
