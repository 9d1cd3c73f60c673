"""Reading ahead: the next item of an async iterator is fetched while the caller works on
this one.

A scheduler tick over 100,000 subscriptions reads a page of them (and works out which are
due) while the page before is being planned: the reads wait on the database while the planner
computes, and the other way round. One item is read ahead, so memory holds two pages at most.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TypeVar, cast

T = TypeVar("T")
_END = object()


async def read_ahead(source: AsyncIterator[T]) -> AsyncGenerator[T, None]:
    """`source`'s items in order, each next one fetched while the caller handles the last;
    an error of `source` is raised where its item would have come. Leaving early cancels the
    fetch in flight."""
    fetching: asyncio.Future[object] = asyncio.ensure_future(anext(source, _END))
    try:
        while True:
            item = await fetching
            if item is _END:
                return
            fetching = asyncio.ensure_future(anext(source, _END))
            yield cast(T, item)
    finally:
        if not fetching.done():
            fetching.cancel()
            await asyncio.gather(fetching, return_exceptions=True)
