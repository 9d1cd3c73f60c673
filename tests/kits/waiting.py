"""Waiting for something to happen: the condition itself is asked, a short poll apart,
until it holds or the time is up (a fixed sleep is either too short on a slow machine or
too long everywhere else)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
POLL_SECONDS = 0.01
What = str | Callable[[], str]  # what did not happen; a callable says it as of the timeout


def _failure(what: What) -> AssertionError:
    said = what() if callable(what) else what
    return AssertionError(said or "condition never became true")


async def until(condition: Callable[[], T], timeout: float = 5.0, what: What = "") -> T:
    """The first truthy value `condition` returns; an AssertionError after `timeout` s."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not (value := condition()):
        if asyncio.get_running_loop().time() > deadline:
            raise _failure(what)
        await asyncio.sleep(POLL_SECONDS)
    return value


async def until_async(
    condition: Callable[[], Awaitable[T]],
    timeout: float = 5.0,
    what: What = "",
    every: float = POLL_SECONDS,
) -> T:
    """`until` for a condition that has to await its answer (a database query); `every`
    spaces out one that costs the code under test something to answer."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not (value := await condition()):
        if asyncio.get_running_loop().time() > deadline:
            raise _failure(what)
        await asyncio.sleep(every)
    return value
