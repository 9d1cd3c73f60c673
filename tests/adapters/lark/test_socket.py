"""The long connection: lark-oapi's own ws client, in its thread, against the loopback fake of
Feishu's endpoint and frame protocol. Events reach `dispatch` on the service's loop, a card
action's answer goes back in the response frame, a failing or slow dispatch costs only its
own answer, stopping ends the thread, and wrong credentials end it with a logged reason."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.adapters.lark.socket import LarkSocket
from tests.fakes.lark.events import card_action_event, message_event
from tests.fakes.lark.ws import FakeLarkSocket, Recorded
from tests.kits.waiting import until

TOKEN = "vt_Fixture0Token0000000000000001"
BOT = "ou_bot00000000000000000001"
ALICE = "ou_alice000000000000000001"
GROUP = "oc_team00000000000000000001"
MESSAGE = "om_0000000000000000000001"
ANSWER = {
    "toast": {"type": "success", "content": "已重新生成"},
    "card": {"type": "raw", "data": {"schema": "2.0", "body": {"elements": []}}},
}


def mention(event_id: str = "ev_0001") -> dict[str, Any]:
    return message_event(
        token=TOKEN,
        event_id=event_id,
        chat_id=GROUP,
        chat_type="group",
        sender_open_id=ALICE,
        text="@_user_1 7422 风险",
        mentions=[("@_user_1", BOT, "prdigest")],
        message_id=MESSAGE,
    )


def press(event_id: str = "ev_0002") -> dict[str, Any]:
    return card_action_event(
        token=TOKEN,
        event_id=event_id,
        operator_open_id=ALICE,
        chat_id=GROUP,
        message_id=MESSAGE,
        value={"action": "rerun", "digest": "verl-daily"},
    )


class Service:
    """The service side: what `dispatch` saw, where it ran, and what it answers."""

    def __init__(self) -> None:
        self.seen: list[tuple[dict[str, Any], asyncio.AbstractEventLoop, int]] = []
        self.fail: set[str] = set()  # event ids whose dispatch raises
        self.hold: dict[str, asyncio.Event] = {}  # event ids whose dispatch waits for this

    async def dispatch(self, body: dict[str, Any]) -> dict[str, Any] | None:
        self.seen.append((body, asyncio.get_running_loop(), threading.get_ident()))
        event_id = body["header"]["event_id"]
        if event_id in self.fail:
            raise RuntimeError("the store is down")
        if event_id in self.hold:
            await self.hold[event_id].wait()
        return ANSWER if body["header"]["event_type"] == "card.action.trigger" else None


def events(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "prdigest.lark"]


def is_ping(frame: Recorded) -> bool:
    return frame.direction == "in" and frame.headers.get("type") == "ping"


@pytest.fixture
async def fake() -> AsyncIterator[FakeLarkSocket]:
    # Reconnect at once when the fake drops a connection (Feishu's default waits up to 30 s).
    async with FakeLarkSocket(client_config={"ReconnectNonce": 0, "ReconnectInterval": 1}) as f:
        yield f
    assert f.errors == []


@pytest.fixture
def service() -> Service:
    return Service()


@pytest.fixture
async def socket(fake: FakeLarkSocket, service: Service) -> AsyncIterator[LarkSocket]:
    sock = LarkSocket(fake.app_id, fake.app_secret, fake.url, service.dispatch, answer_timeout=1)
    await sock.start()
    await fake.connected()
    yield sock
    await asyncio.wait_for(sock.stop(), 5)


async def test_a_message_reaches_dispatch_on_the_service_loop(
    fake: FakeLarkSocket, service: Service, socket: LarkSocket
) -> None:
    message_id = fake.push_event(mention())
    reply = await fake.reply(message_id)
    assert (reply.code, reply.data) == (200, None)  # a plain event has no answer
    [(body, loop, thread)] = service.seen
    assert body == mention()
    assert loop is asyncio.get_running_loop()
    assert thread == threading.get_ident()
    assert fake.endpoint_calls == [{"AppID": fake.app_id, "AppSecret": fake.app_secret}]
    await until(lambda: any(is_ping(f) for f in fake.frames), what="the client never pinged")


async def test_a_card_actions_answer_goes_back_in_the_response_frame(
    fake: FakeLarkSocket, service: Service, socket: LarkSocket
) -> None:
    assert await fake.push_card_action(press()) == ANSWER
    assert [body for body, _, _ in service.seen] == [press()]


async def test_an_event_split_over_frames_arrives_whole(
    fake: FakeLarkSocket, service: Service, socket: LarkSocket
) -> None:
    assert await fake.push_card_action(press(), parts=3) == ANSWER
    assert [body for body, _, _ in service.seen] == [press()]


async def test_a_failing_dispatch_is_logged_and_the_next_event_still_answered(
    fake: FakeLarkSocket, service: Service, socket: LarkSocket, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="prdigest")
    service.fail.add("ev_0001")
    reply = await fake.reply(fake.push_event(mention("ev_0001")))
    assert (reply.code, reply.data) == (200, None)
    assert "lark.socket_dispatch_failed" in events(caplog)
    assert await fake.push_card_action(press()) == ANSWER


async def test_a_late_dispatch_is_answered_empty_and_the_next_event_still_answered(
    fake: FakeLarkSocket, service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="prdigest")
    sock = LarkSocket(fake.app_id, fake.app_secret, fake.url, service.dispatch, answer_timeout=0.2)
    await sock.start()
    try:
        await fake.connected()
        service.hold["ev_0001"] = release = asyncio.Event()
        reply = await fake.reply(fake.push_event(press("ev_0001")))
        assert (reply.code, reply.data) == (200, None)  # the answer came too late to be sent
        assert "lark.socket_answer_late" in events(caplog)
        assert await fake.push_card_action(press("ev_0003")) == ANSWER
        release.set()  # the late dispatch still runs to its end, on the service loop
    finally:
        await asyncio.wait_for(sock.stop(), 5)


async def test_a_dropped_connection_is_reopened(
    fake: FakeLarkSocket, service: Service, socket: LarkSocket
) -> None:
    await fake.drop()
    await fake.connected(handshakes=2)
    assert await fake.push_card_action(press()) == ANSWER
    assert len(fake.endpoint_calls) == 2  # each connection asks for a new URL and ticket


async def test_stop_closes_the_connection_and_ends_the_thread(
    fake: FakeLarkSocket, service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="prdigest")
    sock = LarkSocket(fake.app_id, fake.app_secret, fake.url, service.dispatch)
    await sock.start()
    await fake.connected()
    thread = sock._thread
    assert thread is not None and thread.is_alive()
    await asyncio.wait_for(sock.stop(), 5)
    assert not thread.is_alive() and not sock.running
    assert "lark.socket_stopped" in events(caplog)
    await until(lambda: fake.open_connections == 0, what="the WebSocket was left open")


async def test_stop_right_after_start_does_not_hang(fake: FakeLarkSocket, service: Service) -> None:
    sock = LarkSocket(fake.app_id, fake.app_secret, fake.url, service.dispatch)
    await sock.start()
    await asyncio.wait_for(sock.stop(), 5)
    assert not sock.running
    await until(lambda: fake.open_connections == 0, what="the WebSocket was left open")


async def test_wrong_credentials_end_the_thread_with_a_logged_reason(
    fake: FakeLarkSocket, service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="prdigest")
    sock = LarkSocket(fake.app_id, "wrong-secret", fake.url, service.dispatch)
    await sock.start()
    await until(lambda: not sock.running, timeout=10, what="the refused socket kept running")
    [refused] = [r for r in caplog.records if r.getMessage() == "lark.socket_refused"]
    assert refused.levelno == logging.ERROR
    assert refused.fields["code"] == 1000040346  # type: ignore[attr-defined]
    assert "app_id is invalid" in refused.fields["msg"]  # type: ignore[attr-defined]
    assert fake.handshakes == 0 and service.seen == []
    await asyncio.wait_for(sock.stop(), 5)
