"""One structured event per log line: `log(logger, "digest.sent", destination="verl-daily")`.

The core writes through the standard `logging` module only; bot/logs.py formats the lines
(JSON or text) and redacts secrets, so the core needs nothing from outside it to log.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any


def log(logger: logging.Logger, event: str, level: int = logging.INFO, /, **fields: Any) -> None:
    logger.log(level, event, extra={"event": event, "fields": fields})


def observe(task: asyncio.Task[Any], logger: logging.Logger, event: str) -> None:
    """Log the error a background task ends with, so that none is left for "Task exception
    was never retrieved" (a cancelled task is not an error)."""

    def done(finished: asyncio.Task[Any]) -> None:
        if finished.cancelled():
            return
        exc = finished.exception()
        if exc is not None:
            log(logger, event, logging.ERROR, error=repr(exc)[:500])

    task.add_done_callback(done)
