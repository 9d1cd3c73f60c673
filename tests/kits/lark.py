"""Test kit for the Feishu/Lark adapter (no tests here): the service's Lark side, in-process,
against the strict fake Open API, with events sealed the way Feishu seals them (encrypted and
signed) and posted to `POST /lark/events`, and a fresh SQLite store.

    async with FakeLark() as fake, LarkBot.running(fake, tmp_path) as bot:
        asked = await bot.say(GROUP, ALICE, "7422 风险")
        [card] = await bot.replies(GROUP, asked)
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette

from bot.adapters.lark.adapter import EVENTS_PATH, LarkAdapter
from bot.adapters.lark.callbacks import LarkSecrets
from bot.adapters.lark.sender import LarkSender
from bot.core.delivery.outbox import plan_digest
from bot.core.models import Platform
from bot.core.render.lark import lark_md_to_plain
from bot.core.reports.parse.parser import parse_file
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate
from bot.service.app import Service
from bot.service.context import Context
from bot.settings import BotConfig, Env
from tests.fakes.lark.api import BOT_OPEN_ID, OWNER_OPEN_ID, FakeLark, Posted
from tests.fakes.lark.events import card_action_event, message_event, seal
from tests.kits.paths import SEED
from tests.kits.waiting import until_async

GROUP = "oc_team000001"
DM = "oc_p2palice01"  # ALICE's one-to-one chat with the bot
ALICE = OWNER_OPEN_ID  # GROUP's owner
MANAGER = "ou_manager00001"
BOB = "ou_bobmember001"  # a plain member of GROUP
SECRETS = LarkSecrets("vt-fake-verification-token", "ek-fake-encrypt-key-0123456789")
BOT_MENTION = ("@_user_1", BOT_OPEN_ID, "prdigest")
# The morning after the seed report (#7422) was merged: it is within every window.
NOW = datetime(2026, 8, 18, 8, 0, tzinfo=UTC)


def card_text(card: Mapping[str, Any]) -> str:
    """What a reader sees of a card: its title and its divs' and notes' text, as plain text."""
    lines = [str(card.get("header", {}).get("title", {}).get("content", ""))]
    for element in card.get("elements", []):
        if element.get("tag") == "div":
            lines.append(element["text"]["content"])
        elif element.get("tag") == "note":
            lines += [inner["content"] for inner in element["elements"]]
    return lark_md_to_plain("\n".join(line for line in lines if line))


def buttons(card: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every button and ⋯ menu of a card, in order."""
    found: list[dict[str, Any]] = []
    for element in card.get("elements", []):
        if element.get("tag") == "action":
            found += element["actions"]
        if "extra" in element:
            found.append(element["extra"])
    return found


async def open_service(
    fake: FakeLark, tmp_path: Path, config: dict[str, Any] | None = None
) -> Service:
    database_url = f"sqlite:///{tmp_path / 'bot.db'}"
    env = Env(
        database_url=database_url,
        lark_app_id=fake.app_id,
        lark_app_secret=fake.app_secret,
        lark_api_url=fake.url,
        lark_verification_token=SECRETS.verification_token,
        lark_encrypt_key=SECRETS.encrypt_key,
    )
    data = {"timezone": "UTC", "lark": {"receive": "webhook"}, **(config or {})}
    engine = create_engine(database_url)
    await migrate(engine)
    context = Context(env, BotConfig.model_validate(data), engine, ReportStore(engine))
    return Service(context, clock=lambda: NOW)


class LarkBot:
    """The service's Lark adapter started against `fake` (no scheduler, no outbox loop)."""

    def __init__(self, service: Service, fake: FakeLark) -> None:
        self.service = service
        self.fake = fake
        [adapter] = service.adapters
        assert isinstance(adapter, LarkAdapter)
        self.adapter = adapter
        self.web = Starlette(routes=adapter.routes())
        self._events = itertools.count(1)

    @classmethod
    @asynccontextmanager
    async def running(
        cls, fake: FakeLark, tmp_path: Path, config: dict[str, Any] | None = None
    ) -> AsyncIterator[LarkBot]:
        for chat in (GROUP, DM):
            fake.add_chat(chat, mode="p2p" if chat == DM else "group", managers=(MANAGER,))
        for person, name in ((ALICE, "alice"), (BOB, "bob"), (MANAGER, "mia")):
            fake.add_person(person, name)
        service = await open_service(fake, tmp_path, config)
        sender = service.senders[Platform.LARK]
        assert isinstance(sender, LarkSender)
        bot = cls(service, fake)
        await service.ctx.reports.upsert(parse_file(SEED).report, source="test")
        await bot.adapter.start()
        try:
            yield bot
        finally:
            await bot.adapter.stop()
            await sender.close()
            await service.ctx.engine.dispose()

    async def add_report(self, number: int) -> None:
        """A copy of the seed report (#7422) as PR `number`, stored now."""
        report = parse_file(SEED).report.model_copy(update={"number": number})
        await self.service.ctx.reports.upsert(report, source="test")

    def event_id(self) -> str:
        return f"ev-{next(self._events):08d}"

    async def post(
        self, body: dict[str, Any], secrets: LarkSecrets = SECRETS, *, age: float = 0.0
    ) -> httpx.Response:
        """`body` sealed as Feishu seals it (`age` seconds ago) and posted to the adapter."""
        timestamp = int(self.service.clock().timestamp() - age)
        raw, headers = seal(body, secrets, timestamp=timestamp)
        return await self.post_raw(raw, headers)

    async def post_raw(self, raw: bytes, headers: Mapping[str, str]) -> httpx.Response:
        transport = httpx.ASGITransport(app=self.web)
        async with httpx.AsyncClient(transport=transport, base_url="http://bot") as client:
            return await client.post(EVENTS_PATH, content=raw, headers=dict(headers))

    def message(
        self, chat_id: str, user: str, text: str, *, mention: bool = True
    ) -> tuple[str, dict[str, Any]]:
        """A person's text message in `chat_id` (@mentioning the bot first in a group): its
        id, and the event Feishu sends for it."""
        message_id = self.fake.user_message(chat_id)
        private = chat_id == DM
        words = text if private or not mention else f"{BOT_MENTION[0]} {text}"
        event = message_event(
            token=str(SECRETS.verification_token),
            event_id=self.event_id(),
            chat_id=chat_id,
            chat_type="p2p" if private else "group",
            sender_open_id=user,
            text=words,
            message_id=message_id,
            mentions=[BOT_MENTION] if mention and not private else [],
        )
        return message_id, event

    async def say(self, chat_id: str, user: str, text: str, *, mention: bool = True) -> str:
        """Send the message; its id (the answer replies to it)."""
        message_id, event = self.message(chat_id, user, text, mention=mention)
        response = await self.post(event)
        assert response.status_code == 200, response.text
        return message_id

    async def replies(self, chat_id: str, message_id: str, count: int = 1) -> list[Posted]:
        """The bot's cards replying to `message_id`, once there are `count` of them."""

        async def found() -> bool:
            return len(self._replies(chat_id, message_id)) >= count

        await until_async(found, timeout=10, what=f"no reply to {message_id}")
        return self._replies(chat_id, message_id)

    def _replies(self, chat_id: str, message_id: str) -> list[Posted]:
        return [p for p in self.fake.sent_to(chat_id) if p.parent_id == message_id]

    def press_event(
        self, chat_id: str, user: str, message_id: str, value: str, *, option: bool = False
    ) -> dict[str, Any]:
        """The card.action.trigger Feishu sends for a press on a button (or ⋯ option)."""
        return card_action_event(
            token=str(SECRETS.verification_token),
            event_id=self.event_id(),
            operator_open_id=user,
            chat_id=chat_id,
            message_id=message_id,
            value={} if option else {"data": value},
            tag="overflow" if option else "button",
            option=value if option else None,
        )

    async def press_raw(
        self,
        chat_id: str,
        user: str,
        message_id: str,
        value: str,
        *,
        option: bool = False,
        age: float = 0.0,
    ) -> httpx.Response:
        """A press on a card's button (or ⋯ option), sent `age` seconds ago."""
        event = self.press_event(chat_id, user, message_id, value, option=option)
        return await self.post(event, age=age)

    async def press(
        self, chat_id: str, user: str, message_id: str, value: str, *, option: bool = False
    ) -> dict[str, Any]:
        """A press on a card's button (or ⋯ option); the callback's answer."""
        response = await self.press_raw(chat_id, user, message_id, value, option=option)
        assert response.status_code == 200, response.text
        answer = response.json()
        assert isinstance(answer, dict)
        return answer

    async def deliver_digest(self, chat_id: str = GROUP) -> list[Posted]:
        """Plan `chat_id`'s digest now and deliver it; the cards it posted."""
        service = self.service
        [sub] = await service.subscriptions.of(Platform.LARK, chat_id)
        now = service.clock()
        before = len(self.fake.sent_to(chat_id))
        run = await plan_digest(service.ctx.engine, sub, now, service.renderer, now)
        assert run.created and run.messages

        async def delivered() -> bool:
            await service.deliverer.run_once()
            return len(self.fake.sent_to(chat_id)) >= before + run.messages

        await until_async(delivered, timeout=10, what="the digest was not delivered")
        return self.fake.sent_to(chat_id)[before : before + run.messages]
