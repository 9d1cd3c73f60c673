"""Acks first: answers wait while requests are being acknowledged, a few at a time, within a
bound.

The gate waits on the event loop's clock, so these tests run it on virtual time: the settle
and the bounds are kept to the instant, and no test waits for them for real."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from bot.adapters.slack.ack_gate import AckGate
from tests.kits.virtual_time import VirtualClock, virtual_time


@pytest.fixture(autouse=True)
async def clock() -> AsyncIterator[VirtualClock]:
    with virtual_time() as running:  # inside the loop the test runs on
        yield running


async def _answer(gate: AckGate, order: list[str], name: str = "answer") -> None:
    async with gate.turn():
        order.append(name)


async def test_an_answer_waits_until_the_acks_in_flight_are_out() -> None:
    gate = AckGate(max_wait=30, settle=0.01)
    order: list[str] = []
    with gate.acking():
        with gate.acking():
            task = asyncio.create_task(_answer(gate, order))
            await asyncio.sleep(0.05)
            order.append("first ack")
        await asyncio.sleep(0.05)
        order.append("second ack")
    await task
    assert order == ["first ack", "second ack", "answer"]
    assert gate.in_flight == 0


async def test_a_gap_shorter_than_the_settle_time_does_not_release_answers() -> None:
    """Between two requests of a burst nothing is in flight for an instant: answers stay put."""
    gate = AckGate(max_wait=30, settle=0.2)
    order: list[str] = []
    with gate.acking():
        task = asyncio.create_task(_answer(gate, order))
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)  # the gap: shorter than `settle`
    with gate.acking():
        await asyncio.sleep(0.05)
        order.append("next ack")
    await task
    assert order == ["next ack", "answer"]


async def test_a_steady_stream_of_acks_cannot_starve_an_answer() -> None:
    gate = AckGate(max_wait=0.05)
    order: list[str] = []
    with gate.acking():
        # returns after max_wait, ack still in flight
        await asyncio.wait_for(_answer(gate, order), 5)
        assert gate.in_flight == 1
    assert order == ["answer"]


async def test_only_a_few_answers_run_at_once() -> None:
    gate = AckGate(max_wait=30, at_once=2)
    running = 0
    most = 0

    async def answer() -> None:
        nonlocal running, most
        async with gate.turn():
            running += 1
            most = max(most, running)
            await asyncio.sleep(0.01)
            running -= 1

    await asyncio.wait_for(asyncio.gather(*(answer() for _ in range(7))), 5)
    assert most == 2


async def test_with_nothing_in_flight_an_answer_starts_at_once() -> None:
    gate = AckGate(max_wait=30, settle=30)
    order: list[str] = []
    await asyncio.wait_for(_answer(gate, order), 1)
    assert order == ["answer"]


async def test_a_failed_request_still_lets_answers_go() -> None:
    gate = AckGate(max_wait=30, settle=0.01)
    try:
        with gate.acking():
            raise ValueError("handler failed")
    except ValueError:
        pass
    await asyncio.wait_for(_answer(gate, []), 1)
    assert gate.in_flight == 0
