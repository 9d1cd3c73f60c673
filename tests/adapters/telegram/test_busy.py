"""Telegram under more commands than the bot takes on: "busy" at once, to those over only.

A user over their rate gets the busy notice once a minute at most: in webhook mode as the
webhook's own answer (a Bot API call, checked against the spec), with long polling as a
reply. The updates refused are never handled; other users go on being answered.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from telegram import Update

from bot.adapters.telegram import updates
from bot.adapters.telegram.adapter import TelegramAdapter
from bot.adapters.telegram.updates import TelegramApp
from bot.core.models import Locale
from tests.fakes.telegram.api import FakeTelegram
from tests.fakes.telegram.spec import ValueChecker
from tests.fakes.telegram.updates import message_update
from tests.kits.telegram import USER, ZH_USER, TelegramBot, fast_fake, notice, texts, until

BURST = 2
OTHER = 4545
LIMITS = {"chat_work": {"per_user_burst": BURST, "per_user_per_minute": 1}}


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with fast_fake() as server:
        for chat in (USER, OTHER, ZH_USER):
            server.add_chat(chat)
        yield server


def command(fake: FakeTelegram, chat: int, text: str, update_id: int) -> dict[str, Any]:
    return {**message_update(fake.state, chat, text, None), "update_id": update_id}


def spec_problems(fake: FakeTelegram, answer: dict[str, Any]) -> list[str]:
    """What the Bot API would refuse in a webhook answer `{"method": …, fields…}`."""
    method = fake.spec.method(str(answer["method"]))
    if method is None:
        return [f"no method {answer['method']}"]
    fields = {key: value for key, value in answer.items() if key != "method"}
    problems = [f"unknown field {key}" for key in fields if key not in method.fields]
    problems += [f"missing {n}" for n, f in method.fields.items() if f.required and n not in fields]
    checker = ValueChecker(fake.spec)
    for key, value in fields.items():
        if key in method.fields:
            reason = checker.check(method.fields[key].types, value, key)
            problems += [reason] if reason else []
    return problems + checker.unknown


async def settled(bot: TelegramBot) -> None:
    assert isinstance(bot.adapter, TelegramAdapter)
    assert await bot.adapter.work.idle(10)


async def test_over_the_rate_the_webhook_answers_busy_once_and_others_are_answered(
    fake: FakeTelegram, tmp_path: Path
) -> None:
    async with TelegramBot.running(fake, tmp_path, webhook=True, config=LIMITS) as bot:
        responses = [
            await bot.post_update(command(fake, USER, "/risks 7422", 100 + n))
            for n in range(BURST + 3)
        ]
        other = await bot.post_update(command(fake, OTHER, "/risks 7422", 200))
        await until(lambda: len(fake.sent_to(USER)) >= BURST and fake.sent_to(OTHER))
        await settled(bot)

    assert [r.status_code for r in responses] == [200] * (BURST + 3)
    assert [r.content for r in responses[:BURST]] == [b""] * BURST, "taken: handled behind"
    busy = responses[BURST].json()
    assert busy["method"] == "sendMessage" and busy["chat_id"] == USER
    assert busy["text"] == notice("busy")
    assert spec_problems(fake, busy) == []
    assert [r.content for r in responses[BURST + 1 :]] == [b""] * 2, "told once a minute"
    assert other.status_code == 200 and other.content == b""
    assert len(fake.sent_to(USER)) == BURST, "the refused commands never ran"
    assert "#7422" in texts(fake, OTHER)[0]


async def test_the_busy_answer_speaks_the_users_language(
    fake: FakeTelegram, tmp_path: Path
) -> None:
    async with TelegramBot.running(fake, tmp_path, webhook=True, config=LIMITS) as bot:
        for n in range(BURST + 1):
            update = command(fake, ZH_USER, "/tags", 300 + n)
            update["message"]["from"]["language_code"] = "zh-hans"
            response = await bot.post_update(update)
        await settled(bot)
    assert response.json()["text"] == notice("busy", Locale.ZH)


async def test_with_long_polling_a_user_over_the_rate_gets_one_busy_reply(
    fake: FakeTelegram, tmp_path: Path
) -> None:
    async with TelegramBot.running(fake, tmp_path, config=LIMITS) as bot:
        for _ in range(BURST + 3):
            fake.push_message(USER, "/tags")
        await until(lambda: len(fake.sent_to(USER)) >= BURST + 1)
        await settled(bot)
        shown = texts(fake, USER)
    assert shown.count(notice("busy")) == 1
    assert len(shown) == BURST + 1


async def test_an_update_refused_after_its_user_was_told_busy_is_not_read(
    fake: FakeTelegram, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[object] = []
    read_update = updates._read_update

    def counted(data: object, app: TelegramApp) -> Update | None:
        read.append(data)
        return read_update(data, app)

    monkeypatch.setattr(updates, "_read_update", counted)
    async with TelegramBot.running(fake, tmp_path, webhook=True, config=LIMITS) as bot:
        responses = [
            await bot.post_update(command(fake, USER, "/risks 7422", 100 + n))
            for n in range(BURST + 3)
        ]
        await settled(bot)
    assert responses[BURST].json()["text"] == notice("busy")
    assert [r.content for r in responses[BURST + 1 :]] == [b""] * 2
    assert len(read) == BURST + 1, "read: the taken ones and the one told busy"
    assert len(fake.sent_to(USER)) == BURST


def test_who_and_where_read_from_the_json_agree_with_the_update() -> None:
    person = {"id": 42, "is_bot": False, "first_name": "A"}
    group = {"id": -100, "type": "supergroup", "title": "G"}
    message = {"message_id": 7, "date": 0, "chat": group, "from": person, "text": "/tags"}
    press = {"id": "1", "from": person, "chat_instance": "1", "data": "x", "message": message}
    cases = [
        {"update_id": 1, "message": message},
        {"update_id": 2, "callback_query": press},
        {"update_id": 3, "my_chat_member": {"chat": group}},
    ]
    for data in cases:
        update = Update.de_json(data, None)
        chat = update.effective_chat
        expected = None
        if update.effective_message is not None or update.callback_query is not None:
            expected = (updates.asker(update), str(chat.id) if chat is not None else "")
        assert updates._sender(data) == expected, data
