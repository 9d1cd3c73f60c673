"""The service in `lark.receive: socket` (the default): events come over the SDK's long
connection, served by the fake from the same base URL as the Open API, as Feishu serves both;
a mention is answered in its thread, a press's answer (toast and card) goes back in the
connection's response frame, and no HTTP callback route is open."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from tests.fakes.lark.api import FakeLark
from tests.fakes.lark.ws import FakeLarkSocket
from tests.kits.lark import ALICE, BOB, GROUP, LarkBot, buttons, card_text

# Reconnect at once when a connection drops (Feishu's default waits up to 30 s).
QUICK_RECONNECT = {"ReconnectNonce": 0, "ReconnectInterval": 1}


@asynccontextmanager
async def socket_bot(tmp_path: Path) -> AsyncIterator[tuple[LarkBot, FakeLarkSocket]]:
    """The service in socket mode, its long connection open; no protocol fault at the end."""
    line = {"name": "team", "platform": "lark", "target": GROUP}
    config = {"locale": "en", "channels": [line], "lark": {"receive": "socket"}}
    socket = FakeLarkSocket(client_config=QUICK_RECONNECT)
    async with FakeLark(socket=socket) as fake, LarkBot.running(fake, tmp_path, config) as bot:
        await socket.connected()
        yield bot, socket
    assert socket.errors == []


async def test_a_mention_over_the_long_connection_is_answered_in_its_thread(
    tmp_path: Path,
) -> None:
    async with socket_bot(tmp_path) as (bot, socket):
        assert bot.adapter.routes() == [], "no public URL: POST /lark/events is not served"
        asked, event = bot.message(GROUP, BOB, "7422 risks")
        answered = socket.push_event(event)
        assert (await socket.reply(answered)).code == 200
        [answer] = await bot.replies(GROUP, asked)
        assert answer.in_thread and "#7422" in card_text(answer.card)

        again = socket.push_event(event)  # Feishu redelivers an event whose answer was late
        assert (await socket.reply(again)).code == 200
        later, after = bot.message(GROUP, BOB, "7422")
        socket.push_event(after)
        await bot.replies(GROUP, later)  # the chat's answers leave in order
        assert len(await bot.replies(GROUP, asked)) == 1, "a redelivered event is answered once"


async def test_a_press_over_the_long_connection_gets_its_card_back_in_the_frame(
    tmp_path: Path,
) -> None:
    async with socket_bot(tmp_path) as (bot, socket):
        await bot.service.subscriptions.sync_config(bot.service.ctx.config)
        [card] = await bot.deliver_digest()
        [read] = [
            b["value"]["data"]
            for b in buttons(card.card)
            if b["tag"] == "button" and b["value"]["data"].startswith("read:")
        ]
        answer = await socket.push_card_action(bot.press_event(GROUP, ALICE, card.message_id, read))
        assert answer["toast"]["type"] == "success" and "alice" in answer["toast"]["content"]
        assert "✅ alice" in card_text(answer["card"]["data"])
