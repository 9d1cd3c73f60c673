"""Starting the Telegram side: a wrong token stops the service, an unreachable API does not,
and a webhook without its secret is refused before anything starts."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.adapters.telegram.adapter import TelegramAdapter
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate
from bot.service.app import Service
from bot.service.context import Context
from bot.settings import BotConfig, ConfigError, Env
from tests.fakes.telegram.api import FakeTelegram
from tests.kits.telegram import WEBHOOK_URL


async def context_for(tmp_path: Path, token: str, api_url: str, **config: object) -> Context:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    env = Env(database_url=url, telegram_bot_token=token, telegram_api_url=api_url)
    engine = create_engine(url)
    await migrate(engine)
    return Context(env, BotConfig.model_validate(config), engine, ReportStore(engine))


async def service_for(tmp_path: Path, token: str, api_url: str) -> Service:
    return Service(await context_for(tmp_path, token, api_url))


async def test_a_token_telegram_refuses_stops_the_start_with_a_clear_message(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as fake:
        service = await service_for(tmp_path, "999:not-the-fakes-token", fake.url)
        [adapter] = service.adapters
        with pytest.raises(ConfigError, match="TELEGRAM_BOT_TOKEN was refused"):
            await adapter.start()
        await adapter.stop()
    await service.ctx.engine.dispose()


async def test_an_unreachable_api_is_retried_in_the_background_without_stopping_the_service(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake = FakeTelegram()
    await fake.start()
    closed_url = fake.url
    await fake.stop()  # nothing listens there any more
    service = await service_for(tmp_path, fake.token, closed_url)
    [adapter] = service.adapters
    assert isinstance(adapter, TelegramAdapter)

    await adapter.start()  # returns: Slack, delivery and the web server may still start

    events = [getattr(r, "event", "") for r in caplog.records if r.levelno >= logging.WARNING]
    assert "telegram.unreachable" in events
    await adapter.stop()
    await service.ctx.engine.dispose()


async def test_a_webhook_without_its_secret_is_refused_before_anything_starts(
    tmp_path: Path,
) -> None:
    ctx = await context_for(
        tmp_path, "123456:TEST-token", "http://127.0.0.1:9", telegram={"webhook_url": WEBHOOK_URL}
    )

    with pytest.raises(ConfigError, match="TELEGRAM_WEBHOOK_SECRET"):
        Service(ctx)
    await ctx.engine.dispose()
