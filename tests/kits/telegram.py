"""Test kit for the Telegram adapter (no tests here): the service's Telegram side, in-process,
against the strict fake Bot API — polling or webhook — with a fresh SQLite store.

    async with FakeTelegram() as fake, TelegramBot.polling(fake, tmp_path) as bot:
        fake.push_message(USER, "/risks 7422")
        await until(lambda: fake.sent_to(USER))
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette

from bot.adapters.telegram.adapter import TelegramAdapter
from bot.adapters.telegram.pace import ChatPacer, TelegramLimits
from bot.adapters.telegram.sender import TelegramSender
from bot.core.delivery.outbox import plan_digest
from bot.core.models import Format, Locale, Platform
from bot.core.render.renderer import Renderer
from bot.core.reports.parse.parser import parse_file
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate
from bot.service.app import Service
from bot.service.context import Context
from bot.settings import BotConfig, Env
from tests.fakes.telegram.api import FakeTelegram, FloodLimits, SentMessage
from tests.fakes.telegram.state import user_object
from tests.fakes.telegram.updates import message_update
from tests.kits.paths import SEED
from tests.kits.waiting import until as until  # the Telegram tests import it from here
from tests.kits.waiting import until_async

USER = 4242  # a private chat: its id is the user's id
ZH_USER = 4343
GROUP = -1001
ADMIN = 11  # an administrator of GROUP
OWNER = 12  # GROUP's creator
MEMBER = 13  # a plain member of GROUP
WEBHOOK_URL = "https://bot.example.com/telegram/webhook"
WEBHOOK_SECRET = "tg-webhook-secret_0123456789"
# The fake's flood windows and the bot's pacing both run 10x faster: quick tests that would
# still see a reply sent too early (the fake answers it 429 and records a violation).
TIME_SCALE = 0.1


def fast_fake() -> FakeTelegram:
    return FakeTelegram(flood=FloodLimits(time_scale=TIME_SCALE))


def scaled_limits(scale: float) -> TelegramLimits:
    """Telegram's limits with every window multiplied by `scale`, like the fake's."""
    limits = TelegramLimits()
    return TelegramLimits(
        per_chat_seconds=limits.per_chat_seconds * scale,
        group_window_seconds=limits.group_window_seconds * scale,
        overall_seconds=limits.overall_seconds * scale,
        max_per_second=limits.max_per_second / scale,
    )


def notice(key: str, locale: Locale = Locale.EN, **params: str) -> str:
    """A bot notice as the chat shows it (the wording lives in the labels table)."""
    return Renderer().notice(key, Format.TELEGRAM, locale, **params).text


def subscribed(locale: Locale = Locale.EN, **params: str) -> str:
    """The start of a `subscribe` answer, up to the next digest's time (the clock's)."""
    cut = "\x00"
    text = notice("subscribed", locale, **params, next=cut, days="30", recent="0")
    return text.split(cut)[0]


def add_group(fake: FakeTelegram, chat_id: int = GROUP) -> None:
    fake.add_chat(chat_id, "group", "PR readers")
    fake.set_member(chat_id, ADMIN, "administrator")
    fake.set_member(chat_id, OWNER, "creator")
    fake.set_member(chat_id, MEMBER, "member")


def push_from_zh_user(fake: FakeTelegram, text: str) -> None:
    """ZH_USER, whose Telegram app is in Chinese, sends `text` in their private chat."""
    fake.add_chat(ZH_USER)
    update = message_update(fake.state, ZH_USER, text, None)
    update["message"]["from"] = {**user_object(ZH_USER), "language_code": "zh-hans"}  # type: ignore[index]
    fake.push_update(update)


def texts(fake: FakeTelegram, chat_id: int) -> list[str]:
    """What the chat shows, message by message."""
    return [message.plain_text for message in fake.sent_to(chat_id)]


def buttons(message: SentMessage) -> list[dict[str, str]]:
    """The inline buttons under a message, row after row."""
    markup = message.reply_markup or {}
    rows = markup.get("inline_keyboard", [])
    assert isinstance(rows, list)
    return [button for row in rows for button in row]


async def open_service(
    fake: FakeTelegram, tmp_path: Path, *, webhook: bool, config: dict[str, Any] | None = None
) -> Service:
    """The service on a private SQLite file; `config` adds top-level keys (e.g. `locale`)."""
    database_url = f"sqlite:///{tmp_path / 'bot.db'}"
    env = Env(
        database_url=database_url,
        telegram_bot_token=fake.token,
        telegram_api_url=fake.url,
        telegram_webhook_secret=WEBHOOK_SECRET,
    )
    telegram = {"webhook_url": WEBHOOK_URL} if webhook else {}
    data = {"timezone": "UTC", "telegram": telegram, **(config or {})}
    engine = create_engine(database_url)
    await migrate(engine)
    return Service(Context(env, BotConfig.model_validate(data), engine, ReportStore(engine)))


class TelegramBot:
    """The service's Telegram adapter started against `fake` (no scheduler, no outbox loop)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        [adapter] = service.adapters
        assert isinstance(adapter, TelegramAdapter)
        self.adapter = adapter
        self.web = Starlette(routes=adapter.routes())

    @classmethod
    @asynccontextmanager
    async def running(
        cls,
        fake: FakeTelegram,
        tmp_path: Path,
        *,
        webhook: bool = False,
        config: dict[str, Any] | None = None,
    ) -> AsyncIterator[TelegramBot]:
        service = await open_service(fake, tmp_path, webhook=webhook, config=config)
        sender = service.senders[Platform.TELEGRAM]
        assert isinstance(sender, TelegramSender)
        sender.pacer = ChatPacer(limits=scaled_limits(fake.flood.time_scale))
        bot = cls(service)
        await bot.service.ctx.reports.upsert(parse_file(SEED).report, source="test")
        await bot.adapter.start()
        try:
            yield bot
        finally:
            await bot.adapter.stop()
            await sender.close()
            await service.ctx.engine.dispose()

    async def post_update(
        self, update: dict[str, Any], secret: str | None = WEBHOOK_SECRET
    ) -> httpx.Response:
        """Deliver an update the way Telegram does in webhook mode."""
        headers = {} if secret is None else {b"X-Telegram-Bot-Api-Secret-Token": secret.encode()}
        transport = httpx.ASGITransport(app=self.web)
        async with httpx.AsyncClient(transport=transport, base_url="http://bot") as client:
            return await client.post("/telegram/webhook", json=update, headers=headers)


@asynccontextmanager
async def two_pr_group(
    fake: FakeTelegram, tmp_path: Path, max_items: int
) -> AsyncIterator[TelegramBot]:
    """The bot with GROUP subscribed (`max_items`, English) and two PRs stored: the seed
    report #7422 and a copy of it as #7500."""
    channel = {"name": "readers", "platform": "telegram", "target": str(GROUP)}
    config = {"locale": "en", "channels": [{**channel, "max_items": max_items}]}
    async with TelegramBot.running(fake, tmp_path, config=config) as running:
        service = running.service
        await service.subscriptions.sync_config(service.ctx.config)
        other = parse_file(SEED).report.model_copy(update={"number": 7500})
        await service.ctx.reports.upsert(other, source="test")
        yield running


async def deliver_digest(bot: TelegramBot, fake: FakeTelegram) -> list[SentMessage]:
    """Plan GROUP's digest now and deliver it; the messages it posted."""
    service = bot.service
    [sub] = await service.subscriptions.of(Platform.TELEGRAM, str(GROUP))
    now = service.clock()
    before = len(fake.sent_to(GROUP))
    run = await plan_digest(service.ctx.engine, sub, now, service.renderer, now)
    assert run.created and run.messages

    async def delivered() -> bool:
        await service.deliverer.run_once()
        return len(fake.sent_to(GROUP)) >= before + run.messages

    await until_async(delivered, timeout=10, what="the digest was not delivered")
    return fake.sent_to(GROUP)[before : before + run.messages]
