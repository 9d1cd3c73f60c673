"""Slack under more commands than the bot takes on: "busy" at once, and only to those over.

A user over their rate (or anyone while the queue is full) gets the busy notice in the ack
itself, which Slack shows to that user alone; a mention over the rate gets it as an
ephemeral message, once a minute at most. Other users go on being answered.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from slack_bolt.request.async_request import AsyncBoltRequest as BoltRequest
from slack_bolt.response import BoltResponse

from bot.adapters.slack.adapter import SlackAdapter
from bot.core.models import Format, Locale
from bot.core.render.renderer import Renderer
from tests.kits.slack import (
    CHANNEL,
    USER,
    SlackBot,
    bot_config,
    slack_bot,
    slash_body,
    wait_for,
)

BURST = 2
OTHER = "U0OTHER"


def busy_text() -> str:
    return Renderer().notice("busy", Format.SLACK, Locale.EN).text


async def settled(bot: SlackBot) -> None:
    """Every answer taken so far has been sent."""
    adapter = next(a for a in bot.service.adapters if isinstance(a, SlackAdapter))
    await adapter.listeners.work.idle(10)


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    config = bot_config(chat_work={"per_user_burst": BURST, "per_user_per_minute": 1})
    async with slack_bot(tmp_path, config) as running:
        yield running


async def test_a_user_over_their_rate_is_told_busy_in_the_ack_and_others_are_answered(
    bot: SlackBot,
) -> None:
    keys: list[str] = []
    acks = []
    for _ in range(BURST + 2):
        key, url = bot.response_url()
        keys.append(key)
        response = await bot.post(slash_body("7422", url))
        assert response.status_code == 200
        acks.append(response.content)
    assert acks[:BURST] == [b""] * BURST, "taken: an empty ack, the answer follows"
    for refused in acks[BURST:]:
        body = json.loads(refused)
        assert body["response_type"] == "ephemeral"
        assert body["text"] == busy_text()

    other = await bot.command("7422", user=OTHER)
    assert "#7422" in (other[0].text or "")
    await settled(bot)
    assert all(len(bot.answers(key)) == 1 for key in keys[:BURST]), "taken: answered"
    assert all(bot.answers(key) == [] for key in keys[BURST:]), "a refused command never runs"


async def test_a_mention_over_the_rate_gets_one_ephemeral_busy_notice(bot: SlackBot) -> None:
    for number in range(BURST + 3):
        response = await bot.mention("7422", ts=f"1700000000.{number:06d}", event_id=f"Ev{number}")
        assert response.status_code == 200
    await wait_for(lambda: bot.fake.messages_in(CHANNEL), count=BURST + 1)
    await settled(bot)
    messages = bot.fake.messages_in(CHANNEL)
    busy = [m for m in messages if m.method == "chat.postEphemeral"]
    assert len(busy) == 1, "once a minute at most"
    assert busy[0].text == busy_text()
    assert busy[0].user == USER
    answers = [m for m in messages if m.method == "chat.postMessage"]
    assert len(answers) == BURST


async def test_a_command_the_queue_refuses_is_answered_before_bolt_reads_it(
    bot: SlackBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    adapter = next(a for a in bot.service.adapters if isinstance(a, SlackAdapter))
    dispatched: list[object] = []
    dispatch = adapter.app.async_dispatch

    async def counted(request: BoltRequest) -> BoltResponse:
        dispatched.append(request)
        return await dispatch(request)

    monkeypatch.setattr(adapter.app, "async_dispatch", counted)
    acks = []
    for _ in range(BURST + 3):
        _, url = bot.response_url()
        acks.append((await bot.post(slash_body("7422", url))).content)
    await settled(bot)
    assert [json.loads(ack)["text"] for ack in acks[BURST:]] == [busy_text()] * 3
    assert len(dispatched) == BURST, "a refused command costs no dispatch"
