"""How much a Telegram answer may be, and what a chat hears while the database is out.

`/pr N full` of a huge report sent thousands of messages and held up that chat's other
commands for as long. Now every answer is at most MAX_ANSWER_MESSAGES messages, the last one
saying where the whole report is; during an outage a command is answered "temporarily
unavailable".
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.adapters.answering import MAX_ANSWER_MESSAGES
from bot.core.models import Locale
from bot.core.render.labels import notice_text
from tests.fakes.telegram.api import FakeTelegram
from tests.fakes.telegram.updates import message_update
from tests.kits.answers import HUGE_NUMBER, break_store, huge_report
from tests.kits.telegram import USER, TelegramBot, fast_fake, notice, texts, until

UNAVAILABLE = notice_text("unavailable", Locale.EN, {})


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with fast_fake() as server:
        server.add_chat(USER)
        yield server
    assert server.violations == [], "every reply kept to the flood limits"


async def test_pr_full_of_a_huge_report_sends_a_few_messages_then_where_the_rest_is(
    fake: FakeTelegram, tmp_path: Path
) -> None:
    async with TelegramBot.running(fake, tmp_path) as bot:
        await bot.service.ctx.reports.upsert(huge_report(), source="test")
        fake.push_message(USER, f"/pr {HUGE_NUMBER} full")
        fake.push_message(USER, "/help")
        await until(lambda: len(fake.sent_to(USER)) > MAX_ANSWER_MESSAGES, timeout=20)
    shown = texts(fake, USER)
    assert len(shown) == MAX_ANSWER_MESSAGES + 1, shown[-1][:200]
    pointer = shown[MAX_ANSWER_MESSAGES - 1]
    assert f"https://github.com/verl-project/verl/pull/{HUGE_NUMBER}" in pointer
    assert "📄" in pointer and "prdigest" not in pointer, "the button, never a host command"
    assert shown[-1].startswith(notice("help", commands="")[:9])  # the next command's answer


async def test_during_a_database_outage_a_command_says_the_bot_is_unavailable(
    fake: FakeTelegram, tmp_path: Path
) -> None:
    async with TelegramBot.running(fake, tmp_path, webhook=True) as bot:
        await break_store(bot.service.ctx.engine, tmp_path / "bot.db")
        update = {**message_update(fake.state, USER, "/pr 7422", None), "update_id": 77}
        response = await bot.post_update(update)
        await until(lambda: fake.sent_to(USER))
        assert response.status_code == 200
    assert texts(fake, USER) == [UNAVAILABLE]
