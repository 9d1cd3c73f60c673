"""Presses of one digest's "+N more" that arrive together (a chat of impatient readers, or one
reader on two devices) each take their own page: no page posted twice, no entry skipped.

Runs on SQLite, and on PostgreSQL too when BOT_TEST_DATABASE_URL is set (the `store` fixture);
on PostgreSQL the presses' transactions really interleave.
"""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.outbox import plan_digest
from bot.core.delivery.reading import ReadingPolicy
from bot.core.models import Platform
from bot.core.store.reading import Page, take_page
from bot.core.store.reports import ReportStore
from bot.core.store.sql.tables import digest_runs
from tests.kits.delivery import (
    FakeClock,
    ScriptedSender,
    channel,
    report,
    run_until_idle,
    setup_destinations,
)
from tests.kits.render import RecordingRenderer

SHOWN = 2  # the digest's max_items, and each page's size
MORE = 10  # entries past it: five pages
PRESSES = 8


async def _digest_with_more(store: ReportStore) -> tuple[int, int]:
    """A digest of SHOWN + MORE PRs, delivered: (its destination, its "+N more" key)."""
    [sub] = await setup_destinations(store.engine, channel("team", "T", max_items=SHOWN))
    await store.upsert_many([(report(n), "") for n in range(1, SHOWN + MORE + 1)])
    clock, renderer = FakeClock(), RecordingRenderer()
    run = await plan_digest(store.engine, sub, clock(), renderer, clock(), reading=ReadingPolicy(7))
    assert run.created
    sender = ScriptedSender(clock)
    await run_until_idle(Deliverer(store.engine, {Platform.CONSOLE: sender}, "w", clock), clock, 5)
    options = renderer.seen[-1][1]
    assert renderer.last.more == MORE
    return sub.destination_id, int(options.more_key)


async def _paged(store: ReportStore) -> int:
    async with store.engine.connect() as conn:
        return int((await conn.execute(select(digest_runs.c.paged))).scalar_one())


async def test_concurrent_presses_each_take_their_own_page(store: ReportStore) -> None:
    dest, key = await _digest_with_more(store)
    now = FakeClock()()
    presses = [take_page(store.engine, dest, key, now) for _ in range(PRESSES)]
    pages = [page for page in await asyncio.gather(*presses) if page is not None]

    assert len(pages) == MORE // SHOWN, "one page per press until none is left"
    numbers = [item.report.number for page in pages for item, _ in page.items]
    assert sorted(numbers) == list(range(SHOWN + 1, SHOWN + MORE + 1)), "each entry once"
    assert sorted(page.left for page in pages) == [0, 2, 4, 6, 8]
    assert await _paged(store) == MORE, "paged counts each posted entry once"


async def test_concurrent_presses_without_a_key_page_the_latest_run(store: ReportStore) -> None:
    dest, _ = await _digest_with_more(store)
    now = FakeClock()()
    presses = [take_page(store.engine, dest, None, now) for _ in range(PRESSES)]
    pages: list[Page] = [p for p in await asyncio.gather(*presses) if p is not None]

    numbers = [item.report.number for page in pages for item, _ in page.items]
    assert sorted(numbers) == list(range(SHOWN + 1, SHOWN + MORE + 1))
    assert len(pages) == MORE // SHOWN and await _paged(store) == MORE
