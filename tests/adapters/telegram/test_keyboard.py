"""`/subscribe` with no arguments, pressed through as a user does on the strict fake Bot API:
the keyboard of top tags, toggling two of them, a cadence button, and the subscription."""

from __future__ import annotations

from bot.adapters.telegram.keyboard import keyboard, picked_tags, toggled
from bot.core.models import Locale, Platform
from bot.core.render.limits.telegram import TELEGRAM_MAX_CALLBACK_BYTES
from bot.core.render.picker_labels import picker_label
from bot.core.store.subscriptions import Subscription, SubscriptionStore
from tests.fakes.telegram.api import FakeTelegram, SentMessage
from tests.kits.telegram import ADMIN, GROUP, MEMBER, USER, TelegramBot, buttons, notice, until


async def _subscriptions(bot: TelegramBot, chat: int) -> list[Subscription]:
    store = SubscriptionStore(bot.service.ctx.engine)
    return await store.of(Platform.TELEGRAM, str(chat))


def _shown(fake: FakeTelegram, chat: int, message_id: int) -> SentMessage:
    return fake.chats[chat].messages[message_id]


def _labels(message: SentMessage) -> list[str]:
    return [button["text"] for button in buttons(message)]


async def _open(fake: FakeTelegram, chat: int, user: int) -> SentMessage:
    fake.push_message(chat, "/subscribe", user_id=user)
    await until(lambda: fake.sent_to(chat))
    [sent] = fake.sent_to(chat)
    return sent


async def _press(fake: FakeTelegram, chat: int, message_id: int, data: str, user: int) -> None:
    """Press, and wait until the bot answered it (and, for a tag, swapped the keyboard)."""
    answered = len(fake.answered_callbacks)
    markup = _shown(fake, chat, message_id).reply_markup
    fake.press(chat, message_id, data, user=user)
    await until(lambda: len(fake.answered_callbacks) > answered)
    if data.startswith("pk:t:"):
        await until(lambda: _shown(fake, chat, message_id).reply_markup != markup)


async def test_toggling_two_tags_and_a_cadence_subscribes_the_private_chat(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    sent = await _open(fake, USER, USER)
    locale = Locale.EN  # the fake's users speak English
    assert sent.plain_text == picker_label("keyboard", locale)
    cadences = [picker_label(f"cadence_{c}", locale) for c in ("daily 09:00", "now")]
    assert _labels(sent)[:2] == ["fix (1)", "rollout (1)"] and cadences[1] in _labels(sent)
    await _press(fake, USER, sent.message_id, "pk:t:rollout", USER)
    await _press(fake, USER, sent.message_id, "pk:t:fix", USER)
    assert _labels(_shown(fake, USER, sent.message_id))[:2] == ["✅ fix (1)", "✅ rollout (1)"]
    await _press(fake, USER, sent.message_id, "pk:c:3", USER)
    await until(lambda: _shown(fake, USER, sent.message_id).method == "editMessageText")
    edited = _shown(fake, USER, sent.message_id)
    assert edited.plain_text.startswith("Added subscription 1: (tag:fix OR tag:rollout) (now)")
    assert edited.reply_markup is None, "the keyboard is gone once it was used"
    [sub] = await _subscriptions(bot, USER)
    assert (sub.filter.query, sub.cadence, sub.owner) == (
        "(tag:fix OR tag:rollout)",
        "now",
        str(USER),
    )
    assert fake.violations == []
    sent_methods = [m.method for m in fake.sent_to(USER)]
    assert sent_methods.count("sendMessage") == 1, "the keyboard message became the answer"


async def test_a_cadence_with_no_tag_picked_is_answered_in_an_alert(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    sent = await _open(fake, USER, USER)
    await _press(fake, USER, sent.message_id, "pk:c:0", USER)
    alert = fake.answered_callbacks[-1]
    assert (alert["text"], alert["show_alert"]) == (picker_label("empty_pick", Locale.EN), True)
    assert _shown(fake, USER, sent.message_id).method == "sendMessage", "the keyboard stays"
    assert await _subscriptions(bot, USER) == []


async def test_in_a_group_only_an_admins_press_subscribes_and_the_group_is_told(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    sent = await _open(fake, GROUP, ADMIN)
    await _press(fake, GROUP, sent.message_id, "pk:t:rollout", ADMIN)
    await _press(fake, GROUP, sent.message_id, "pk:c:0", MEMBER)
    refused = fake.answered_callbacks[-1]
    assert (refused["text"], refused["show_alert"]) == (notice("not_admin", Locale.EN), True)
    assert await _subscriptions(bot, GROUP) == []
    await _press(fake, GROUP, sent.message_id, "pk:c:0", ADMIN)
    await until(lambda: _shown(fake, GROUP, sent.message_id).method == "editMessageText")
    told = _shown(fake, GROUP, sent.message_id).plain_text
    assert told == f"User {ADMIN} added subscription 1: tag:rollout (daily 09:00)"
    [sub] = await _subscriptions(bot, GROUP)
    assert (sub.filter.query, sub.cadence, sub.owner) == ("tag:rollout", "daily 09:00", None)


async def test_a_member_typing_subscribe_alone_gets_no_keyboard(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    sent = await _open(fake, GROUP, MEMBER)
    assert sent.plain_text == notice("not_admin", Locale.EN)
    assert sent.reply_markup is None


def test_every_button_fits_telegrams_callback_data_and_toggles_back() -> None:
    long_tag = "x" * 60
    markup = keyboard([("rollout", 3), (long_tag, 2), ("ci", 1)], Locale.EN)
    data = [str(b.callback_data) for row in markup.inline_keyboard for b in row]
    assert all(len(d.encode()) <= TELEGRAM_MAX_CALLBACK_BYTES for d in data)
    assert "pk:t:" + long_tag not in data, "a tag too long for the button is not offered"
    picked = toggled(toggled(markup, "pk:t:ci"), "pk:t:rollout")
    assert picked_tags(picked) == ["rollout", "ci"]
    assert picked_tags(toggled(picked, "pk:t:ci")) == ["rollout"]
