"""Captured Slack requests sent again, and signed bodies of shapes Slack never sends.

A slash command's signature covers its timestamp and body, and stays valid for 5 minutes: a
copy of a signed `/pr subscribe` or `/pr unsubscribe all` could be sent again and again in that
window. Slack itself never sends one request twice with the same signature (an event's retry
is signed anew and carries `X-Slack-Retry-Num`), so a signature seen before is a replay: it is
acknowledged (200, empty) and nothing runs. The signatures seen are kept in the shared dedupe
table, so a replay sent to another replica is refused too.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from bot.adapters.slack.adapter import SlackAdapter
from bot.core.models import Platform
from tests.kits.slack import (
    ADMIN,
    CHANNEL,
    FORM,
    SlackBot,
    channel_posts,
    event_body,
    mention_event,
    signed_headers,
    slack_bot,
    slash_body,
    wait_for,
)

JSON = "application/json"


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with slack_bot(tmp_path) as running:
        running.fake.add_user(ADMIN, name="root")
        yield running


def _adapter(bot: SlackBot) -> SlackAdapter:
    return next(a for a in bot.service.adapters if isinstance(a, SlackAdapter))


async def _settled(bot: SlackBot) -> None:
    """Every answer a request started has been sent."""
    await _adapter(bot).listeners.work.idle(10)


async def _subscribed(bot: SlackBot) -> list[str]:
    """The names of the channel's subscriptions."""
    return [s.name for s in await bot.service.subscriptions.of(Platform.SLACK, CHANNEL)]


async def test_a_signed_subscribe_sent_three_times_is_applied_once(bot: SlackBot) -> None:
    key, url = bot.response_url(user=ADMIN)
    body = slash_body("subscribe tag:rollout", url, user=ADMIN)
    headers = signed_headers(body)
    statuses = [(await bot.http.post("/slack/events", content=body, headers=headers)).status_code]
    await wait_for(lambda: bot.answers(key))
    for _ in range(2):
        response = await bot.http.post("/slack/events", content=body, headers=headers)
        statuses.append(response.status_code)
        assert response.content == b""
    await _settled(bot)
    assert statuses == [200, 200, 200]
    assert len(bot.answers(key)) == 1
    announcements = [m for m in channel_posts(bot.fake, CHANNEL) if "rollout" in (m.text or "")]
    assert len(announcements) == 1, [m.text for m in announcements]


async def test_a_captured_unsubscribe_all_replayed_later_is_refused(bot: SlackBot) -> None:
    await bot.command("subscribe tag:rollout", user=ADMIN)
    _, url = bot.response_url(user=ADMIN)
    captured = slash_body("unsubscribe all", url, user=ADMIN)
    headers = signed_headers(captured)
    assert (await bot.http.post("/slack/events", content=captured, headers=headers)).is_success
    await _settled(bot)
    assert await _subscribed(bot) == []
    await bot.command("subscribe tag:rollout", user=ADMIN)  # the admin subscribes again
    assert await _subscribed(bot) == ["tag:rollout"]

    replayed = await bot.http.post("/slack/events", content=captured, headers=headers)

    await _settled(bot)
    assert replayed.status_code == 200
    assert await _subscribed(bot) == ["tag:rollout"], "the replayed unsubscribe must not remove it"


async def test_a_replay_sent_to_another_replica_is_refused(bot: SlackBot, tmp_path: Path) -> None:
    """Two services on one database: the copy of a request one handled is refused by both."""
    key, url = bot.response_url(user=ADMIN)
    body = slash_body("subscribe tag:rollout", url, user=ADMIN)
    headers = signed_headers(body)
    assert (await bot.http.post("/slack/events", content=body, headers=headers)).is_success
    await wait_for(lambda: bot.answers(key))
    async with slack_bot(tmp_path, seed=False) as other:
        replayed = await other.http.post("/slack/events", content=body, headers=headers)
        await _settled(other)
        assert replayed.status_code == 200
    await _settled(bot)
    assert len(bot.answers(key)) == 1  # the other replica would answer at the same URL


async def test_a_genuine_event_retry_is_acknowledged_and_not_handled_again(
    bot: SlackBot,
) -> None:
    body = event_body(mention_event("7422 risks", ts="1700000000.000100"), "Ev0RETRY1")
    now = int(time.time())
    first = signed_headers(body, timestamp=str(now - 2), content_type=JSON)
    retry = {
        **signed_headers(body, timestamp=str(now), content_type=JSON),
        "X-Slack-Retry-Num": "1",
        "X-Slack-Retry-Reason": "http_timeout",
    }
    assert (await bot.http.post("/slack/events", content=body, headers=first)).status_code == 200
    await wait_for(lambda: channel_posts(bot.fake, CHANNEL))
    answered = len(channel_posts(bot.fake, CHANNEL))
    again = await bot.http.post("/slack/events", content=body, headers=retry)
    replay = await bot.http.post("/slack/events", content=body, headers=first)
    await _settled(bot)
    assert (again.status_code, replay.status_code) == (200, 200)
    assert len(channel_posts(bot.fake, CHANNEL)) == answered


# -- shapes Slack never sends --------------------------------------------------------------------


def _form(**fields: str) -> bytes:
    return urlencode(fields).encode()


def _event(**fields: Any) -> bytes:
    envelope = json.loads(event_body(mention_event("7422", "1.2"), "Ev0SHAPE"))
    return json.dumps({**envelope, **fields}).encode()


def _actions(actions: object) -> bytes:
    payload = {"type": "block_actions", "user": {"id": "U1"}, "actions": actions}
    return _form(payload=json.dumps(payload))


MALFORMED: list[tuple[str, bytes, str]] = [
    ("array", b"[]", JSON),
    ("array of objects", b'[{"type": "event_callback"}]', JSON),
    ("string", b'"event_callback"', JSON),
    ("number", b"1", JSON),
    ("null", b"null", JSON),
    ("boolean", b"true", JSON),
    ("nested too deep", b"[" * 100_000 + b"]" * 100_000, JSON),
    ("not JSON", b"{nope", JSON),
    ("payload array", _form(payload="[]"), FORM),
    ("payload number", _form(payload="1"), FORM),
    ("payload null", _form(payload="null"), FORM),
    ("payload not JSON", _form(payload="nojson"), FORM),
    ("event array", _event(event=[]), JSON),
    ("event string", _event(event="app_mention"), JSON),
    ("event user number", _event(event={"type": "app_mention", "user": 5}), JSON),
    ("authorizations string", _event(authorizations="x"), JSON),
    ("authorizations numbers", _event(authorizations=[1]), JSON),
    ("enterprise number", _event(enterprise=5), JSON),
    ("team list", _event(team=[]), JSON),
    ("actions numbers", _actions([1]), FORM),
    ("actions object", _actions({"action_id": "pr_risks"}), FORM),
    ("command list", _event(command=["/pr"]), JSON),
]


@pytest.mark.parametrize(
    ("body", "content_type"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED]
)
async def test_a_signed_body_slack_never_sends_is_a_400_naming_the_problem(
    bot: SlackBot, body: bytes, content_type: str
) -> None:
    response = await bot.post(body, content_type=content_type)
    assert response.status_code == 400, response.text
    assert "malformed payload" in response.json()["error"]


@pytest.mark.parametrize(
    ("body", "content_type"),
    [(b"{}", JSON), (b'{"type": 5}', JSON), (b"", FORM), (b"a=b", FORM), (b"[]", "text/plain")],
)
async def test_other_odd_signed_bodies_are_never_a_500(
    bot: SlackBot, body: bytes, content_type: str
) -> None:
    response = await bot.post(body, content_type=content_type)
    assert response.status_code < 500, response.text
