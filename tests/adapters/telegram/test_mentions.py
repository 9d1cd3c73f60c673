"""Telegram answers the mention forms Slack does (issue 15): "@bot #7422 的风险" in a group, the
same words in a private chat; text it cannot read in a private chat gets a hint how to ask."""

from __future__ import annotations

from tests.fakes.telegram.api import FakeTelegram
from tests.kits.telegram import (
    GROUP,
    MEMBER,
    USER,
    TelegramBot,
    notice,
    texts,
    until,
)

FLAGS = ("移除隐式配置兜底", "standalone 需显式 auto", "FP8 例外一并删除", "多后端行为一致性")


async def test_a_mention_in_a_group_answers_like_slack(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(GROUP, "@prdigest_test_bot #7422 的风险", user_id=MEMBER)
    await until(lambda: fake.sent_to(GROUP))
    [answer] = texts(fake, GROUP)
    assert "#7422" in answer
    for flag in FLAGS:
        assert flag in answer


async def test_group_talk_not_addressed_to_the_bot_is_left_alone(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(GROUP, "did anyone read #7422 的风险?", user_id=MEMBER)
    fake.push_message(GROUP, "/help", user_id=MEMBER)
    await until(lambda: fake.sent_to(GROUP))
    [only] = texts(fake, GROUP)
    assert only.startswith("Commands:")


async def test_a_private_chat_reads_the_same_words(fake: FakeTelegram, bot: TelegramBot) -> None:
    fake.push_message(USER, "what are the risks of #7422")
    await until(lambda: fake.sent_to(USER))
    [answer] = texts(fake, USER)
    for flag in FLAGS:
        assert flag in answer


async def test_text_it_cannot_read_in_a_private_chat_says_how_to_ask(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(USER, "hello there")
    await until(lambda: fake.sent_to(USER))
    assert texts(fake, USER) == ["Send /pr 7422, or /help for the commands."]
    assert notice("how_to_ask") == "Send /pr 7422, or /help for the commands."
