"""✅ Read changes the digest message in Slack: chat.update shows "✅ <who read it>" on the
entry and takes its Read button away; the thread gets one line per PR, naming every reader;
a ✅ reaction on a message of several PRs asks the reacting user first.

The digest (both PRs in one message) is planned and delivered like a scheduled one to the
strict fake Slack.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

import pytest
from sqlalchemy import select

from bot.adapters.slack.replies import read_blocks
from bot.core.render.actions import EntryAction, action_data
from bot.core.store.sql.tables import reading_marks
from tests.fakes.slack.api import PostedMessage
from tests.kits.slack import (
    ADMIN,
    CHANNEL,
    USER,
    SlackBot,
    action_body,
    all_text,
    channel_posts,
    deliver_digest,
    event_body,
    shown_action,
    two_pr_channel,
    wait_for,
)
from tests.kits.waiting import until

REF = "verl-project/verl#7422"
OTHER = "verl-project/verl#7500"
_events = itertools.count(1)


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with two_pr_channel(tmp_path, max_items=5, admin="bob") as running:
        yield running


async def _digest(bot: SlackBot) -> PostedMessage:
    """Plan the channel's digest and deliver it; its message (both PRs)."""
    [digest] = await deliver_digest(bot)
    assert "#7422" in all_text(digest) and "#7500" in all_text(digest)
    return digest


def _as(body: bytes, name: str) -> bytes:
    """An interaction payload as the user called `name` sends it."""
    payload = json.loads(parse_qs(body.decode())["payload"][0])
    payload["user"]["username"] = payload["user"]["name"] = name
    return urlencode({"payload": json.dumps(payload)}).encode()


async def _press(
    bot: SlackBot, message: PostedMessage, value: str, user: str = USER, name: str = "alice"
) -> None:
    """Press the button carrying `value` that `message` shows."""
    _, url = bot.response_url(user=user)
    body = _as(action_body(shown_action(message, value), message, url, user=user), name)
    assert (await bot.post(body)).status_code == 200


def _now(bot: SlackBot, message: PostedMessage) -> PostedMessage:
    """The message as the channel shows it now."""
    return bot.fake.workspace.messages[(CHANNEL, message.ts)]


def _values(message: PostedMessage) -> list[str]:
    found = []
    for block in message.blocks or []:
        for element in [block.get("accessory"), *block.get("elements", [])]:
            if isinstance(element, dict) and element.get("type") == "button":
                found.append(str(element.get("value")))
    return found


def _entry_text(message: PostedMessage, number: int) -> str:
    """The text of the section block that shows PR `number`."""
    link = f"<https://github.com/verl-project/verl/pull/{number}|"
    texts = [
        str(block["text"]["text"])
        for block in message.blocks or []
        if block.get("type") == "section" and link in str(block["text"]["text"])
    ]
    assert len(texts) == 1, texts
    return texts[0]


def _thread(bot: SlackBot, digest: PostedMessage) -> list[PostedMessage]:
    """The thread under the digest, as it reads now."""
    return [
        bot.fake.workspace.messages[(CHANNEL, m.ts)]
        for m in channel_posts(bot.fake, CHANNEL)
        if m.thread_ts == digest.ts
    ]


async def _marks(bot: SlackBot) -> list[tuple[str, str]]:
    async with bot.service.ctx.engine.connect() as conn:
        rows = await conn.execute(select(reading_marks.c.subject, reading_marks.c.actor))
        return sorted((str(r.subject), str(r.actor)) for r in rows)


def _digest_updates(bot: SlackBot, digest: PostedMessage) -> list[PostedMessage]:
    return [m for m in bot.fake.updates if m.ts == digest.ts]


async def test_read_updates_the_entry_and_takes_its_read_button_away(bot: SlackBot) -> None:
    digest = await _digest(bot)
    await _press(bot, digest, action_data(EntryAction.READ, REF))
    await wait_for(lambda: _digest_updates(bot, digest))
    [line] = await wait_for(lambda: _thread(bot, digest))

    shown = _now(bot, digest)
    assert _entry_text(shown, 7422).endswith("\n✅ alice")
    assert "✅" not in _entry_text(shown, 7500).splitlines()[-1]
    assert action_data(EntryAction.READ, REF) not in _values(shown)
    assert action_data(EntryAction.READ, OTHER) in _values(shown), "the other PR's stays"
    assert len(_values(shown)) == len(_values(digest)) - 1, "every other button stays"
    assert f"✅ {REF} read by alice" in all_text(line)


async def test_two_readers_one_line_that_names_both(bot: SlackBot) -> None:
    digest = await _digest(bot)
    await _press(bot, digest, action_data(EntryAction.READ, REF))
    await wait_for(lambda: _thread(bot, digest))
    # bob's client still shows the digest as it was posted
    await _press(bot, digest, action_data(EntryAction.READ, REF), user=ADMIN, name="bob")
    await until(lambda: "alice, bob" in all_text(_thread(bot, digest)[0]), 10)

    [line] = _thread(bot, digest)
    assert f"✅ {REF} read by alice, bob" in all_text(line)
    assert _entry_text(_now(bot, digest), 7422).endswith("\n✅ alice, bob")
    assert await _marks(bot) == [(REF, "alice\nbob")]


def _reaction(ts: str, name: str = "white_check_mark") -> bytes:
    event = {
        "type": "reaction_added",
        "user": USER,
        "reaction": name,
        "item": {"type": "message", "channel": CHANNEL, "ts": ts},
        "item_user": "U0BOT",
        "event_ts": "1700000600.000100",
    }
    return event_body(event, f"Ev0E{next(_events)}")


def _ephemerals(bot: SlackBot) -> list[PostedMessage]:
    return [m for m in bot.fake.messages_in(CHANNEL) if m.method == "chat.postEphemeral"]


def _buttons(message: PostedMessage) -> list[dict[str, Any]]:
    return [
        element
        for block in message.blocks or []
        for element in block.get("elements", [])
        if element.get("type") == "button"
    ]


async def test_a_reaction_on_several_prs_asks_first_then_marks_them_all(bot: SlackBot) -> None:
    digest = await _digest(bot)
    response = await bot.post(_reaction(digest.ts, "heavy_check_mark"), "application/json")
    assert response.status_code == 200
    [asked] = await wait_for(lambda: _ephemerals(bot))
    assert asked.user == USER
    assert "Mark all 2 PRs in this message read?" in all_text(asked)
    [button] = _buttons(asked)
    assert str(button["value"]).startswith("readall:")
    assert await _marks(bot) == [], "nothing marked until the button is pressed"
    assert _thread(bot, digest) == [] and _digest_updates(bot, digest) == []

    key, url = bot.response_url(user=USER)
    body = json.loads(parse_qs(action_body(button, asked, url).decode())["payload"][0])
    body["container"]["is_ephemeral"] = True
    assert (await bot.post(urlencode({"payload": json.dumps(body)}).encode())).status_code == 200
    [line] = await wait_for(lambda: _thread(bot, digest))

    assert await _marks(bot) == [(REF, "alice"), (OTHER, "alice")]
    assert f"✅ {REF}, {OTHER} read by alice" in all_text(line)
    [done] = await wait_for(lambda: bot.answers(key))
    assert done.replace_original and "All 2 PRs in this message are marked read" in all_text(done)
    await wait_for(lambda: _digest_updates(bot, digest))
    shown = _now(bot, digest)
    assert not [v for v in _values(shown) if v.startswith("read:")], "no Read button left"
    assert _entry_text(shown, 7500).endswith("✅ alice")


async def test_forged_read_all_values_are_refused(
    bot: SlackBot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="prdigest")
    digest = await _digest(bot)
    for value in ("readall:" + "9" * 40, "readall:\u0661", "readall:x"):
        button = {"type": "button", "action_id": "entry:readall",
                  "text": {"type": "plain_text", "text": "x"}, "value": value}  # fmt: skip
        _, url = bot.response_url(user=USER)
        assert (await bot.post(action_body(button, digest, url))).status_code == 200

    def refused() -> bool:
        return sum(r.getMessage() == "entry_action.refused" for r in caplog.records) >= 3

    await until(refused, 10)
    assert await _marks(bot) == []
    assert bot.fake.updates == [] and _thread(bot, digest) == []


def test_a_oneline_entry_loses_its_read_accessory_and_a_full_message_keeps_its_text() -> None:
    text = {"type": "mrkdwn", "text": "★ <https://x/pull/1|#1> title", "verbatim": True}
    read = {"type": "button", "action_id": "entry:read", "value": f"read:{REF}",
            "text": {"type": "plain_text", "text": "✅ Read"}}  # fmt: skip
    oneline = [{"type": "section", "text": text, "accessory": read}]
    [shown] = read_blocks(oneline, [REF], {REF: "✅ alice"})
    assert "accessory" not in shown and shown["text"]["text"].endswith(" · ✅ alice")
    assert read_blocks(oneline, [REF], {}) == oneline, "nobody read it: as posted"
    full = {"type": "section", "text": {**text, "text": "x" * 2995}}
    actions = {"type": "actions", "elements": [read]}
    assert read_blocks([full, actions], [REF], {REF: "✅ alice"}) == [full], "no room: no mark"
