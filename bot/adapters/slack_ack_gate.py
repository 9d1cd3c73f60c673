"""Acks first: an answer starts once no request is waiting for its ack, or after a bound.

Slack wants every command acknowledged within 3 s and retries (or shows the user an error)
when it is not; the answer itself may come any time in the next 30 minutes through
`response_url`. Both share one event loop, and asyncio has no priorities: under a burst of
commands, answers started at once (a store lookup, a render, an HTTP post each) delay the
acks still queued behind them. So answers wait here until the acks in flight are out, for at
most `ANSWER_DEFER_MAX_SECONDS`, so a steady stream of commands cannot starve them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

ANSWER_DEFER_MAX_SECONDS = 1.0


class AckGate:
    def __init__(self, max_wait: float = ANSWER_DEFER_MAX_SECONDS) -> None:
        self.max_wait = max_wait
        self._in_flight = 0
        self._quiet = asyncio.Event()
        self._quiet.set()

    @property
    def in_flight(self) -> int:
        """Requests being acknowledged right now."""
        return self._in_flight

    @contextlib.contextmanager
    def acking(self) -> Iterator[None]:
        """Around the handling of one request, until its response is ready."""
        self._in_flight += 1
        self._quiet.clear()
        try:
            yield
        finally:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._quiet.set()

    async def quiet(self) -> None:
        """Return once no ack is in flight, or after `max_wait` seconds."""
        if self._quiet.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._quiet.wait(), self.max_wait)
