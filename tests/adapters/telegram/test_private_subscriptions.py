"""A person's own subscriptions in a Telegram private chat: anyone may subscribe there (the
person owns what they add), the numbers stay put when one is removed, and nobody else is told.
"""

from __future__ import annotations

from pathlib import Path

from bot.core.models import Locale, Platform
from bot.core.render.labels import chat_words
from tests.fakes.telegram.api import FakeTelegram
from tests.kits.telegram import USER, TelegramBot, notice, subscribed, texts, until

PRIVATE = chat_words(Platform.TELEGRAM, Locale.EN, private=True)  # "your", "you"
OWNER = "you"  # a person's own subscription, listed in their own chat


async def test_a_private_chat_subscribes_twice_lists_removes_one_and_lists_again(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(USER, "/subscribe tag:rollout at daily 09:00")
    fake.push_message(USER, "/subscribe repo:verl-project/verl -tag:ci at weekly fri 17:00")
    fake.push_message(USER, "/subscriptions")
    fake.push_message(USER, "/unsubscribe 1")
    fake.push_message(USER, "/subscriptions")

    await until(lambda: len(fake.sent_to(USER)) == 5, timeout=8)
    first, second, listed, removed, relisted = texts(fake, USER)
    assert first.startswith(subscribed(number="1", query="tag:rollout", cadence="daily 09:00"))
    assert second.startswith("Added subscription 2: repo:verl-project/verl -tag:ci (weekly")
    lines = listed.split("\n")
    assert lines[0] == "Your subscriptions:"
    assert lines[1].startswith("1. tag:rollout · daily 09:00 · next ")
    assert lines[2].startswith("2. repo:verl-project/verl -tag:ci · weekly")
    assert all(line.endswith(f"last none yet · {OWNER}") for line in lines[1:]), lines
    assert removed == notice("unsubscribed", items="1. tag:rollout")
    relines = relisted.split("\n")
    assert len(relines) == 2, "one subscription is left"
    assert relines[1].startswith("2. repo:verl-project/verl -tag:ci"), "it keeps its number"

    subs = await bot.service.subscriptions.of(Platform.TELEGRAM, str(USER))
    assert [(s.number, s.owner, s.filter.query) for s in subs] == [
        (2, str(USER), "repo:verl-project/verl -tag:ci")
    ]
    assert fake.calls("getChatMember") == [], "a private chat asks nobody whether they're admin"


async def test_unsubscribe_all_in_a_private_chat_removes_them_and_the_chat_stays_reachable(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(USER, "/subscribe tag:rollout")
    fake.push_message(USER, "/subscribe tag:ci at now")
    fake.push_message(USER, "/unsubscribe 7")
    fake.push_message(USER, "/unsubscribe all")
    fake.push_message(USER, "/subscriptions")

    await until(lambda: len(fake.sent_to(USER)) == 5, timeout=8)
    shown = texts(fake, USER)
    assert shown[2] == notice("unknown_subscription", cmd="/", numbers="7")
    assert shown[3] == notice("unsubscribed", items="1. tag:rollout, 2. tag:ci")
    assert shown[4] == notice("no_subscriptions", Locale.EN, **PRIVATE)
    assert await bot.service.subscriptions.of(Platform.TELEGRAM, str(USER)) == []
    dest = await bot.service.destinations.find(Platform.TELEGRAM, str(USER))
    assert dest is not None and dest.active, "removing subscriptions does not switch it off"


async def test_subscribing_past_the_cap_is_refused_with_the_cap_and_how_to_make_room(
    fake: FakeTelegram, tmp_path: Path
) -> None:
    limits = {"subscription_limits": {"per_destination": 2}}
    async with TelegramBot.running(fake, tmp_path, config=limits) as bot:
        for query in ("tag:rollout", "tag:ci", "tag:fix"):
            fake.push_message(USER, f"/subscribe {query}")
        fake.push_message(USER, "/unsubscribe 1")
        fake.push_message(USER, "/subscribe tag:fix")

        await until(lambda: len(fake.sent_to(USER)) == 5, timeout=8)
        shown = texts(fake, USER)
        assert shown[2] == notice("subscription_limit_destination", limit="2", cmd="/")
        assert shown[4].startswith("Added subscription 3: tag:fix"), "room made, room taken"
        subs = await bot.service.subscriptions.of(Platform.TELEGRAM, str(USER))
        assert [s.filter.query for s in subs] == ["tag:ci", "tag:fix"]


async def test_next_and_last_are_told_in_the_chats_own_zone(
    fake: FakeTelegram, tmp_path: Path
) -> None:
    async with TelegramBot.running(fake, tmp_path, config={"timezone": "Asia/Shanghai"}):
        fake.push_message(USER, "/subscribe tag:rollout at daily 09:00")
        fake.push_message(USER, "/subscriptions")

        await until(lambda: len(fake.sent_to(USER)) == 2, timeout=8)
        added, listed = texts(fake, USER)
        assert "09:00 Asia/Shanghai" in added and "UTC" not in added
        assert "next " in listed and "09:00 Asia/Shanghai" in listed
