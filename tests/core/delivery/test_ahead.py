"""read_ahead: the next item is fetched while the caller handles the last one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from bot.core.delivery.ahead import read_ahead


async def test_items_come_in_order_and_the_next_is_fetched_while_this_one_is_handled() -> None:
    events: list[str] = []
    asked = [asyncio.Event() for _ in range(4)]  # the source was asked for item n (3: the end)

    async def source() -> AsyncIterator[int]:
        for number in range(3):
            asked[number].set()
            events.append(f"fetch {number}")
            await asyncio.sleep(0)
            yield number
        asked[3].set()

    seen = []
    async for number in read_ahead(source()):
        events.append(f"handle {number}")
        # the caller's work, which ends only once the next fetch has begun meanwhile
        await asyncio.wait_for(asked[number + 1].wait(), 5)
        events.append(f"handled {number}")
        seen.append(number)
    assert seen == [0, 1, 2]
    assert events.index("fetch 1") < events.index("handled 0")
    assert events.index("fetch 2") < events.index("handled 1")


async def test_an_error_of_the_source_arrives_where_its_item_would_have() -> None:
    async def source() -> AsyncIterator[int]:
        yield 1
        raise RuntimeError("page 2 unreadable")

    seen: list[int] = []

    async def read() -> None:
        async for number in read_ahead(source()):
            seen.append(number)

    with pytest.raises(RuntimeError, match="page 2 unreadable"):
        await read()
    assert seen == [1]


async def test_leaving_early_cancels_the_fetch_in_flight() -> None:
    fetching, cancelled = asyncio.Event(), asyncio.Event()

    async def source() -> AsyncIterator[int]:
        yield 1
        fetching.set()
        try:
            await asyncio.sleep(60)  # a fetch that never ends
        except asyncio.CancelledError:
            cancelled.set()
            raise
        yield 2

    ahead = read_ahead(source())
    async for _ in ahead:
        await asyncio.wait_for(fetching.wait(), 5)  # the next fetch has started (and waits)
        break
    await ahead.aclose()
    assert cancelled.is_set()
