"""Background tasks: the error one ends with is logged, never left unretrieved."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from bot.core.logs import observe

logger = logging.getLogger("prdigest.test")


async def _fail() -> None:
    raise RuntimeError("the store went away")


async def test_a_failing_background_task_is_logged_and_retrieved(
    caplog: pytest.LogCaptureFixture,
) -> None:
    unretrieved: list[dict[str, object]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(context))
    caplog.set_level(logging.ERROR, logger="prdigest.test")
    task = asyncio.create_task(_fail())
    observe(task, logger, "test.task_failed")
    await asyncio.wait({task})
    await asyncio.sleep(0)  # done callbacks run on the next turn
    del task
    gc.collect()
    events = [r for r in caplog.records if getattr(r, "event", None) == "test.task_failed"]
    assert len(events) == 1
    assert "the store went away" in getattr(events[0], "fields", {})["error"]
    assert unretrieved == []


async def test_a_cancelled_task_is_not_an_error(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="prdigest.test")
    task = asyncio.create_task(asyncio.sleep(60))
    observe(task, logger, "test.task_failed")
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.wait({task})
    await asyncio.sleep(0)
    assert not [r for r in caplog.records if getattr(r, "event", None) == "test.task_failed"]
