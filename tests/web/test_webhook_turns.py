"""Platform webhook requests share a few turns (`bot.web.routes.one_turn_at_a_time`): under a flood,
one turn of the event loop serves a few of them, and a probe waits behind those few."""

from __future__ import annotations

import asyncio
from collections import Counter

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from bot.web.routes import one_turn_at_a_time


class LoopTurns:
    """Counts the event loop's turns: a callback that schedules itself once a turn."""

    def __init__(self) -> None:
        self.turn = 0
        self._running = True

    def _tick(self) -> None:
        self.turn += 1
        if self._running:
            asyncio.get_running_loop().call_soon(self._tick)

    def __enter__(self) -> LoopTurns:
        asyncio.get_running_loop().call_soon(self._tick)
        return self

    def __exit__(self, *exc: object) -> None:
        self._running = False


def request() -> Request:
    return Request({"type": "http", "method": "POST", "path": "/hook", "headers": []})


async def test_requests_that_never_suspend_are_served_a_few_per_turn_of_the_loop() -> None:
    served: Counter[int] = Counter()
    with LoopTurns() as turns:

        async def answer_at_once(request: Request) -> Response:
            served[turns.turn] += 1  # an ack, a "busy": no await that suspends
            return PlainTextResponse("ok")

        (route,) = one_turn_at_a_time([Route("/hook", answer_at_once)], at_once=3)
        assert isinstance(route, Route)
        answers = await asyncio.gather(*(route.endpoint(request()) for _ in range(30)))

    assert [a.status_code for a in answers] == [200] * 30
    assert sum(served.values()) == 30
    assert max(served.values()) <= 3, served
