"""Helpers for the Slack tests (no tests here): signed requests as Slack sends them, and the
bot's real Starlette app wired to the strict fake Web API, driven over ASGI in-process.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from pydantic import SecretStr
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier

from bot.adapters.slack.adapter import SlackAdapter
from bot.core.clock import Clock, utc_clock
from bot.core.delivery.outbox import plan_digest
from bot.core.models import Platform
from bot.core.reports.parse.parser import parse_file
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate
from bot.service.app import Service
from bot.service.context import Context
from bot.settings import BotConfig, Env
from tests.fakes.slack.api import FakeSlack, PostedMessage
from tests.kits.paths import SEED
from tests.kits.waiting import until_async

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
CHANNEL = "C0TEST1"
USER = "U0TEST1"
ADMIN = "U0ADMIN"
TEAM = "T0TEST"
BOT_USER = "U0BOT"
FLAGS = ("移除隐式配置兜底", "standalone 需显式 auto", "FP8 例外一并删除", "多后端行为一致性")
FORM = "application/x-www-form-urlencoded"

_ids = itertools.count(1)


def signed_headers(
    body: bytes,
    secret: str = SIGNING_SECRET,
    timestamp: str | None = None,
    content_type: str = FORM,
) -> dict[str, str]:
    """The headers Slack sends: the timestamp and `v0=` HMAC of `v0:{ts}:{body}`."""
    ts = timestamp if timestamp is not None else str(int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    assert signature is not None
    return {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": signature,
        "Content-Type": content_type,
    }


def slash_body(
    text: str, response_url: str, channel: str = CHANNEL, user: str = USER, user_name: str = "alice"
) -> bytes:
    fields = {
        "token": "legacy-verification-token",
        "team_id": TEAM,
        "team_domain": "fake-team",
        "channel_id": channel,
        "channel_name": channel.lower(),
        "user_id": user,
        "user_name": user_name,
        "command": "/pr",
        "text": text,
        "api_app_id": "A0TEST",
        "is_enterprise_install": "false",
        "response_url": response_url,
        "trigger_id": f"1337.{next(_ids)}.abcdef",
    }
    return urlencode(fields).encode()


def event_body(event: dict[str, Any], event_id: str) -> bytes:
    envelope = {
        "token": "legacy-verification-token",
        "team_id": TEAM,
        "api_app_id": "A0TEST",
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
        "is_ext_shared_channel": False,
    }
    return json.dumps(envelope).encode()


def mention_event(text: str, ts: str, channel: str = CHANNEL, user: str = USER) -> dict[str, Any]:
    return {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT_USER}> {text}",
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
    }


def buttons_of(message: PostedMessage) -> list[dict[str, Any]]:
    return [
        element
        for block in message.blocks or []
        if block["type"] == "actions"
        for element in block["elements"]
    ]


def action_body(
    button: dict[str, Any], message: PostedMessage, response_url: str, user: str = USER
) -> bytes:
    """A `block_actions` payload for pressing `button` on a posted message."""
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": "alice", "name": "alice", "team_id": TEAM},
        "api_app_id": "A0TEST",
        "token": "legacy-verification-token",
        "container": {
            "type": "message",
            "message_ts": message.ts,
            "channel_id": message.channel,
            "is_ephemeral": False,
        },
        "trigger_id": f"1337.{next(_ids)}.abcdef",
        "team": {"id": TEAM, "domain": "fake-team"},
        "channel": {"id": message.channel, "name": message.channel.lower()},
        "message": {"type": "message", "ts": message.ts, "text": message.text},
        "response_url": response_url,
        "actions": [_action(button)],
    }
    return urlencode({"payload": json.dumps(payload)}).encode()


def _action(element: dict[str, Any]) -> dict[str, Any]:
    """The `actions[]` item Slack sends for pressing a button or choosing an overflow option."""
    common = {
        "action_id": element["action_id"],
        "block_id": "b1",
        "action_ts": f"{time.time():.6f}",
    }
    if element.get("type") == "overflow":
        return {"type": "overflow", "selected_option": element["selected_option"], **common}
    return {"type": "button", "text": element["text"], "value": element["value"], **common}


def shown_action(message: PostedMessage, value: str) -> dict[str, Any]:
    """The button (or overflow option, as chosen) carrying `value` that the posted message
    shows; an AssertionError naming what it shows when there is none."""
    shown = []
    for block in message.blocks or []:
        for element in [block.get("accessory"), *block.get("elements", [])]:
            if not isinstance(element, dict):
                continue
            if element.get("type") == "button":
                shown.append(element.get("value"))
                if element.get("value") == value:
                    return element
            for option in element.get("options", []) if element.get("type") == "overflow" else []:
                shown.append(option.get("value"))
                if option.get("value") == value:
                    return {"type": "overflow", "action_id": element["action_id"],
                            "selected_option": option}  # fmt: skip
    raise AssertionError(f"no button {value!r} on the message; it shows {shown}")


def channel_posts(fake: FakeSlack, channel: str) -> list[PostedMessage]:
    """What the bot posted into the channel for everyone (not response_url answers)."""
    return [m for m in fake.messages_in(channel) if m.method == "chat.postMessage"]


def all_text(message: PostedMessage) -> str:
    """Everything a reader sees in a message: fallback text and every block's text."""
    return (message.text or "") + "\n" + json.dumps(message.blocks or [], ensure_ascii=False)


async def wait_for(
    found: Callable[[], list[PostedMessage]], count: int = 1, timeout: float = 10.0
) -> list[PostedMessage]:
    deadline = time.monotonic() + timeout
    while len(messages := found()) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"expected {count} message(s), got {len(messages)}")
        await asyncio.sleep(0.02)
    return messages


@dataclass
class SlackBot:
    """The service's real web app over ASGI, with a fake Slack behind it."""

    fake: FakeSlack
    service: Service
    http: httpx.AsyncClient
    keys: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    async def post(self, body: bytes, content_type: str = FORM) -> httpx.Response:
        headers = signed_headers(body, content_type=content_type)
        return await self.http.post("/slack/events", content=body, headers=headers)

    def response_url(self, channel: str = CHANNEL, user: str = USER) -> tuple[str, str]:
        key = f"R{next(self.keys)}"
        return key, self.fake.response_url(key, channel=channel, user=user)

    async def command(
        self, text: str, channel: str = CHANNEL, user: str = USER, user_name: str = "alice"
    ) -> list[PostedMessage]:
        """Run `/pr text` and wait for its first answer through response_url."""
        key, url = self.response_url(channel, user)
        response = await self.post(slash_body(text, url, channel, user, user_name))
        assert response.status_code == 200, response.text
        return await wait_for(lambda: self.answers(key))

    def answers(self, key: str) -> list[PostedMessage]:
        path = f"/response/{key}"
        calls = [c for c in self.fake.calls("response_url") if c.path == path and c.ok]
        stamps = {str(c.response["ts"]) for c in calls if c.response}
        return [m for m in self.fake.posted if m.method == "response_url" and m.ts in stamps]

    def handled_bodies(self) -> list[dict[str, Any]]:
        """Bodies that reach bolt's listeners from now on (a global middleware runs only after
        the signature was verified)."""
        seen: list[dict[str, Any]] = []

        async def spy(body: dict[str, Any], next_: Callable[[], Awaitable[None]]) -> None:
            seen.append(body)
            await next_()

        adapter = next(a for a in self.service.adapters if isinstance(a, SlackAdapter))
        adapter.app.middleware(spy)
        return seen

    async def mention(self, text: str, ts: str, event_id: str, **where: str) -> httpx.Response:
        body = event_body(mention_event(text, ts, **where), event_id)
        return await self.post(body, content_type="application/json")


def bot_config(**overrides: Any) -> BotConfig:
    # English answers where a test reads them (the built-in default `locale` is zh).
    data: dict[str, Any] = {"timezone": "UTC", "locale": "en", "slack": {"admins": [ADMIN]}}
    data.update(overrides)
    return BotConfig.model_validate(data)


@asynccontextmanager
async def slack_bot(
    tmp_path: Path, config: BotConfig | None = None, seed: bool = True, clock: Clock = utc_clock
) -> AsyncIterator[SlackBot]:
    """A Service whose Slack adapter talks to a fresh FakeSlack; the seed report is stored."""
    async with FakeSlack() as fake:
        env = Env(
            database_url=f"sqlite:///{tmp_path / 'bot.db'}",
            slack_bot_token=SecretStr(fake.bot_token),
            slack_signing_secret=SecretStr(SIGNING_SECRET),
            slack_api_url=fake.api_url,
        )
        engine = create_engine(env.database_url)
        await migrate(engine)
        ctx = Context(env, config or bot_config(), engine, ReportStore(engine))
        try:
            if seed:
                await ctx.reports.upsert(parse_file(SEED).report, source="test")
            service = Service(ctx, clock=clock)
            await service.subscriptions.sync_config(ctx.config)
            transport = httpx.ASGITransport(app=service.web())
            try:
                async with httpx.AsyncClient(transport=transport, base_url="http://bot") as http:
                    yield SlackBot(fake, service, http)
            finally:
                for adapter in service.adapters:
                    await adapter.stop()  # answers still in flight finish first
        finally:
            await engine.dispose()


async def refused(call: Awaitable[Any]) -> dict[str, Any]:
    """The JSON body of a Web API call the client raised SlackApiError for."""
    with pytest.raises(SlackApiError) as caught:
        await call
    data = caught.value.response.data
    assert isinstance(data, dict)
    return data


@asynccontextmanager
async def two_pr_channel(tmp_path: Path, max_items: int, admin: str) -> AsyncIterator[SlackBot]:
    """The bot with CHANNEL subscribed (`max_items`), ADMIN named `admin`, and two PRs
    stored: the seed report #7422 and a copy of it as #7500."""
    channels = [{"name": "readers", "platform": "slack", "target": CHANNEL, "max_items": max_items}]
    async with slack_bot(tmp_path, bot_config(channels=channels)) as running:
        running.fake.add_user(ADMIN, name=admin)
        other = parse_file(SEED).report.model_copy(update={"number": 7500})
        await running.service.ctx.reports.upsert(other, source="test")
        yield running


async def deliver_digest(bot: SlackBot) -> list[PostedMessage]:
    """Plan CHANNEL's digest now and deliver it; the messages it posted."""
    service = bot.service
    [sub] = await service.subscriptions.of(Platform.SLACK, CHANNEL)
    now = service.clock()
    run = await plan_digest(service.ctx.engine, sub, now, service.renderer, now)
    assert run.created and run.messages

    async def delivered() -> bool:
        await service.deliverer.run_once()
        return len(channel_posts(bot.fake, CHANNEL)) >= run.messages

    await until_async(delivered, timeout=10, what="the digest was not delivered")
    return channel_posts(bot.fake, CHANNEL)[: run.messages]
