"""Acks first: answers run while no request is waiting for its ack, a few at a time.

Slack wants every command acknowledged within 3 s and retries (or shows the user an error)
when it is not; the answer itself may come any time in the next 30 minutes through
`response_url`. Both share one event loop, and asyncio has no priorities: an answer (a store
lookup, a render, an HTTP post) costs several acks' worth of CPU, so answers running during a
burst of commands delay every ack queued behind them. Measured with 50 clients: acks alone
are as fast as a bare bolt app; with answers interleaved, p99 was 1.5-1.7× slower.

So an answer waits for its turn here:
- at most `MAX_ANSWERS_AT_ONCE` answers run at a time, so an ack that arrives while they run
  waits behind a few answer steps, not behind every answer of the burst;
- an answer starts only once no request has been in flight for `SETTLE_SECONDS` (a burst has
  gaps far shorter than that between its requests, so "nothing in flight" for an instant
  does not release the queue in the middle of one);
- after `ANSWER_DEFER_MAX_SECONDS` in the queue, an answer goes regardless, so a steady
  stream of commands cannot starve the answers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator

ANSWER_DEFER_MAX_SECONDS = 1.0
SETTLE_SECONDS = 0.01
MAX_ANSWERS_AT_ONCE = 8


class AckGate:
    def __init__(
        self,
        max_wait: float = ANSWER_DEFER_MAX_SECONDS,
        settle: float = SETTLE_SECONDS,
        at_once: int = MAX_ANSWERS_AT_ONCE,
    ) -> None:
        self.max_wait = max_wait
        self.settle = settle
        self._in_flight = 0
        self._last_done = float("-inf")
        self._quiet = asyncio.Event()
        self._quiet.set()
        self._slots = asyncio.Semaphore(at_once)

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
                self._last_done = asyncio.get_running_loop().time()
                self._quiet.set()

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Around one answer: it starts when its turn comes (see the module docstring)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.max_wait
        async with self._slots:
            await self._settled(loop, deadline)
            yield

    async def _settled(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        """Return once nothing has been in flight for `settle` seconds, or at `deadline`."""
        while (left := deadline - loop.time()) > 0:
            if self._in_flight:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._quiet.wait(), left)
                continue
            calm_in = self._last_done + self.settle - loop.time()
            if calm_in <= 0:
                return
            await asyncio.sleep(min(calm_in, left))
