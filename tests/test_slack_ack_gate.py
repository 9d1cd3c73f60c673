"""Acks first: answers wait while requests are being acknowledged, within a bound."""

from __future__ import annotations

import asyncio

from bot.adapters.slack_ack_gate import AckGate


async def test_an_answer_waits_until_the_acks_in_flight_are_out() -> None:
    gate = AckGate(max_wait=30)
    order: list[str] = []

    async def answer() -> None:
        await gate.quiet()
        order.append("answer")

    with gate.acking():
        with gate.acking():
            task = asyncio.create_task(answer())
            await asyncio.sleep(0.05)
            order.append("first ack")
        await asyncio.sleep(0.05)
        order.append("second ack")
    await task
    assert order == ["first ack", "second ack", "answer"]
    assert gate.in_flight == 0


async def test_a_steady_stream_of_acks_cannot_starve_an_answer() -> None:
    gate = AckGate(max_wait=0.05)
    with gate.acking():
        await asyncio.wait_for(gate.quiet(), 5)  # returns after max_wait, ack still in flight
        assert gate.in_flight == 1


async def test_with_nothing_in_flight_an_answer_starts_at_once() -> None:
    gate = AckGate(max_wait=30)
    await asyncio.wait_for(gate.quiet(), 1)


async def test_a_failed_request_still_lets_answers_go() -> None:
    gate = AckGate(max_wait=30)
    try:
        with gate.acking():
            raise ValueError("handler failed")
    except ValueError:
        pass
    await asyncio.wait_for(gate.quiet(), 1)
    assert gate.in_flight == 0
