"""A chat with no destination speaks the config's `locale` (issue 15: one locale default serves
CLI and chats). The order: the chat's destination's locale, then (Telegram) the user's own
language when we speak it, then the config's `locale`; a chat that subscribes keeps what it
was answered in as its subscription's locale."""

from __future__ import annotations

from pathlib import Path

from bot.core.models import Locale, Platform
from bot.core.store.subscriptions import DEFAULT_CHAT_SCHEDULE
from bot.core.store.subscriptions.destination_store import DestinationStore
from tests.fakes.telegram.api import FakeTelegram
from tests.fakes.telegram.state import user_object
from tests.fakes.telegram.updates import message_update
from tests.kits.slack import ADMIN, CHANNEL, USER, SlackBot, bot_config, slack_bot
from tests.kits.telegram import (
    GROUP,
    MEMBER,
    TelegramBot,
    add_group,
    fast_fake,
    notice,
    subscribed,
    texts,
    until,
)
from tests.kits.telegram import USER as TG_USER

EN_CHANNEL = "C0TESTEN"


async def _text(bot: SlackBot, command: str, **where: str) -> str:
    [answer] = await bot.command(command, **where)
    assert answer.text is not None
    return answer.text


async def _locale_of(store: DestinationStore, platform: Platform, chat_id: str) -> Locale:
    """The language the chat's digests speak (its subscription's)."""
    locale = await store.locale_of(platform, chat_id)
    assert locale is not None
    return locale


def _subscribed(locale: Locale) -> str:
    """The start of `subscribe tag:rollout`'s answer, up to the next digest's time."""
    return subscribed(locale, number="1", query="tag:rollout", cadence=DEFAULT_CHAT_SCHEDULE)


async def test_a_slack_channel_without_destination_answers_in_the_configs_locale(
    tmp_path: Path,
) -> None:
    en_team = {"name": "en-team", "platform": "slack", "target": EN_CHANNEL, "locale": "en"}
    async with slack_bot(tmp_path, bot_config(locale="zh", channels=[en_team])) as bot:
        bot.fake.add_user(ADMIN, name="root")
        refused = await _text(bot, "subscribe tag:rollout", user=USER)
        assert refused == "只有本频道管理员可以修改订阅。"
        assert await _text(bot, "99999999") == "没有找到 #99999999 的报告。"
        # A channel's own locale wins over the config's.
        assert await _text(bot, "subscribe tag:rollout", user=USER, channel=EN_CHANNEL) == (
            "Only admins of this channel can change its subscriptions."
        )
        # Subscribing keeps the language the channel was answered in.
        subscribed = await _text(bot, "subscribe tag:rollout", user=ADMIN)
        assert subscribed.startswith("已添加订阅 1：tag:rollout（0 9 * * mon-fri），下一次：")
        store = DestinationStore(bot.service.ctx.engine)
        assert await _locale_of(store, Platform.SLACK, CHANNEL) is Locale.ZH


async def test_a_slack_channel_without_destination_reads_an_english_config(
    tmp_path: Path,
) -> None:
    async with slack_bot(tmp_path, bot_config(locale="en")) as bot:
        assert await _text(bot, "99999999") == "No report found for #99999999."


def _from(fake: FakeTelegram, chat_id: int, text: str, user_id: int, language: str | None) -> None:
    update = message_update(fake.state, chat_id, text, user_id)
    sender = user_object(user_id)
    if language is None:
        del sender["language_code"]
    else:
        sender["language_code"] = language
    update["message"]["from"] = sender  # type: ignore[index]
    fake.push_update(update)


async def test_a_telegram_user_without_language_code_reads_the_configs_locale(
    tmp_path: Path,
) -> None:
    async with fast_fake() as fake, TelegramBot.running(fake, tmp_path) as bot:  # locale: zh
        fake.add_chat(TG_USER)
        _from(fake, TG_USER, "/subscribe tag:rollout", TG_USER, None)
        await until(lambda: fake.sent_to(TG_USER))
        [shown] = texts(fake, TG_USER)
        assert shown.startswith(_subscribed(Locale.ZH))
        store = DestinationStore(bot.service.ctx.engine)
        assert await _locale_of(store, Platform.TELEGRAM, str(TG_USER)) is Locale.ZH


async def test_a_telegram_language_we_do_not_speak_reads_the_configs_locale(
    tmp_path: Path,
) -> None:
    config = {"locale": "en"}
    async with fast_fake() as fake, TelegramBot.running(fake, tmp_path, config=config):
        fake.add_chat(TG_USER)
        _from(fake, TG_USER, "/subscribe tag:rollout", TG_USER, "de")
        await until(lambda: fake.sent_to(TG_USER))
        [shown] = texts(fake, TG_USER)
        assert shown.startswith(_subscribed(Locale.EN))


async def test_the_telegram_users_language_then_the_chats_destination_win(
    tmp_path: Path,
) -> None:
    config = {"locale": "en"}
    async with fast_fake() as fake, TelegramBot.running(fake, tmp_path, config=config):
        add_group(fake)
        _from(fake, GROUP, "/pr 99999999", MEMBER, "zh-hans")  # the user's own language
        await until(lambda: fake.sent_to(GROUP))
        assert texts(fake, GROUP) == [notice("not_found", Locale.ZH, ref="#99999999")]
        fake.add_chat(TG_USER)
        _from(fake, TG_USER, "/subscribe tag:rollout", TG_USER, "zh")
        await until(lambda: fake.sent_to(TG_USER))
        # The private chat now has a zh destination: an English-speaking user reads it in zh.
        _from(fake, TG_USER, "/pr 99999999", TG_USER, "en")
        await until(lambda: len(fake.sent_to(TG_USER)) == 2)
        assert texts(fake, TG_USER)[1] == notice("not_found", Locale.ZH, ref="#99999999")
