"""The Telegram adapter tests' default fixtures: a fast fake with a private chat and a group,
and the bot running against it. A module that needs another setup defines its own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.telegram.api import FakeTelegram
from tests.kits.telegram import USER, TelegramBot, add_group, fast_fake


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with fast_fake() as server:
        server.add_chat(USER)
        add_group(server)
        yield server


@pytest.fixture
async def bot(fake: FakeTelegram, tmp_path: Path) -> AsyncIterator[TelegramBot]:
    async with TelegramBot.running(fake, tmp_path) as running:
        yield running
