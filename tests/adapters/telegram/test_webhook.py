"""Webhook mode: updates POSTed to /telegram/webhook, as Telegram delivers them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.core.models import Platform
from tests.fakes.telegram.api import FakeTelegram
from tests.fakes.telegram.updates import message_update
from tests.kits.telegram import (
    USER,
    WEBHOOK_SECRET,
    WEBHOOK_URL,
    TelegramBot,
    fast_fake,
    notice,
    subscribed,
    texts,
    until,
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with fast_fake() as server:
        server.add_chat(USER)
        yield server


@pytest.fixture
async def bot(fake: FakeTelegram, tmp_path: Path) -> AsyncIterator[TelegramBot]:
    async with TelegramBot.running(fake, tmp_path, webhook=True) as running:
        yield running


def command(fake: FakeTelegram, text: str, update_id: int) -> dict[str, object]:
    return {**message_update(fake.state, USER, text, None), "update_id": update_id}


async def test_start_sets_the_webhook_with_the_secret_and_registers_the_menu(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    assert fake.state.webhook["url"] == WEBHOOK_URL
    assert fake.state.webhook["secret_token"] == WEBHOOK_SECRET
    assert fake.state.allowed_updates == {"message", "callback_query", "my_chat_member"}
    assert fake.calls("setMyCommands")
    assert not fake.calls("getUpdates") and not fake.calls("deleteWebhook")


@pytest.mark.parametrize("secret", [None, "", "wrong-secret", WEBHOOK_SECRET + "x", "é"])
async def test_a_missing_or_wrong_secret_is_refused_and_nothing_is_processed(
    fake: FakeTelegram, bot: TelegramBot, secret: str | None
) -> None:
    update = command(fake, "/help", 700)

    refused = await bot.post_update(update, secret=secret)
    accepted = await bot.post_update(update)  # the genuine delivery still counts

    assert refused.status_code == 403
    assert accepted.status_code == 200
    await bot.post_update(command(fake, "/tags", 701))  # answered after /help: a chat's order

    await until(lambda: len(fake.sent_to(USER)) >= 2)
    shown = texts(fake, USER)
    assert shown[1] == notice("tags_list", items="fix (1), rollout (1)"), "/help answered twice"


async def test_the_same_update_delivered_twice_is_answered_once(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    update = command(fake, "/risks 7422", 801)

    first = await bot.post_update(update)
    second = await bot.post_update(update)  # Telegram retried: it did not hear our 200
    assert (first.status_code, second.status_code) == (200, 200)
    await bot.post_update(command(fake, "/tags", 802))

    await until(lambda: len(fake.sent_to(USER)) >= 2)
    shown = texts(fake, USER)
    assert len(shown) == 2
    assert "#7422" in shown[0] and shown[1] == notice("tags_list", items="fix (1), rollout (1)")


async def test_an_edited_command_does_not_run_again(fake: FakeTelegram, bot: TelegramBot) -> None:
    original = command(fake, "/subscribe tag:rollout", 901)
    edited = {"update_id": 902, "edited_message": {**original["message"], "edit_date": 1}}  # type: ignore[dict-item]

    await bot.post_update(original)
    await bot.post_update(edited)
    await bot.post_update(command(fake, "/subscriptions", 903))

    await until(lambda: len(fake.sent_to(USER)) >= 2)
    shown = texts(fake, USER)
    assert len(shown) == 2
    added = subscribed(number="1", query="tag:rollout", cadence="0 9 * * mon-fri")
    assert shown[0].startswith(added)
    assert "1. tag:rollout · 0 9 * * mon-fri" in shown[1]  # /subscriptions
    assert "2. " not in shown[1], "the edit did not add a second subscription"
    subs = await bot.service.subscriptions.of(Platform.TELEGRAM, str(USER))
    assert [s.name for s in subs] == ["tag:rollout"]


async def test_a_body_that_is_not_an_update_is_not_an_error_telegram_would_retry(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    assert (await bot.post_update({"hello": "world"})).status_code == 200
    assert (await bot.post_update({"update_id": 5, "message": {"oops": 1}})).status_code == 200
    assert fake.sent == []


async def test_polling_mode_serves_no_webhook(fake: FakeTelegram, tmp_path: Path) -> None:
    async with TelegramBot.running(fake, tmp_path) as polling:
        response = await polling.post_update(command(fake, "/help", 1000))

    assert response.status_code == 404
