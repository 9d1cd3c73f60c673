"""Inline keyboards on the strict Telegram fake: buttons a user presses, answers to callback
queries, and keyboards the bot swaps; driven by python-telegram-bot's real Bot and raw httpx."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import Any

import httpx
import pytest
import telegram
from telegram import InlineKeyboardButton as Button
from telegram import InlineKeyboardMarkup as Markup
from telegram.error import BadRequest
from telegram.request import HTTPXRequest

from tests.fakes.telegram.api import FakeTelegram
from tests.kits.clocks import SecondsClock

USER = 4242


@pytest.fixture
async def fake(clock: SecondsClock) -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(clock=clock) as server:
        server.add_chat(USER)
        yield server


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[telegram.Bot]:
    request = HTTPXRequest(httpx_kwargs={"verify": False})
    async with telegram.Bot(fake.token, base_url=f"{fake.url}/bot", request=request) as client:
        yield client


async def refused(fake: FakeTelegram, call: Awaitable[Any]) -> str:
    with pytest.raises(BadRequest):
        await call
    return fake.requests[-1].description


def tags(*chosen: str) -> Markup:
    """The subscribe keyboard: one toggle per tag (checked when chosen), then Done."""
    toggles = [
        Button(("✓ " if tag in chosen else "") + tag, callback_data=f"sub:tag:{tag}")
        for tag in ("breaking", "rollout")
    ]
    return Markup([toggles, [Button("Done", callback_data="sub:done")]])


async def test_a_pressed_button_becomes_a_callback_query_answered_once(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    message = await bot.send_message(USER, "Pick tags", reply_markup=tags())

    query_id = fake.press(USER, message.message_id, "sub:tag:breaking", user=USER)
    (update,) = await bot.get_updates()

    query = update.callback_query
    assert query is not None and query.id == query_id
    assert (query.data, query.from_user.id, query.chat_instance) == (
        "sub:tag:breaking",
        USER,
        str(USER),
    )
    assert query.message is not None and query.message.message_id == message.message_id
    assert await bot.answer_callback_query(query_id, text="breaking on", cache_time=0)
    again = await refused(fake, bot.answer_callback_query(query_id))
    assert again == (
        "Bad Request: query is too old and response timeout expired or query ID is invalid"
    )
    assert [a["text"] for a in fake.answered_callbacks] == ["breaking on"]


async def test_a_made_up_query_id_and_a_long_answer_are_refused(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    message = await bot.send_message(USER, "Pick tags", reply_markup=tags())
    query_id = fake.press(USER, message.message_id, "sub:done", user=USER)

    made_up = await refused(fake, bot.answer_callback_query("999999"))
    too_long = await refused(fake, bot.answer_callback_query(query_id, text="x" * 201))

    assert made_up.startswith("Bad Request: query is too old")
    assert too_long == "Bad Request: MESSAGE_TOO_LONG"
    assert await bot.answer_callback_query(query_id, text="x" * 200, show_alert=True)


async def test_answer_fields_are_checked_against_the_spec(fake: FakeTelegram) -> None:
    async with httpx.AsyncClient(base_url=f"{fake.url}/bot{fake.token}/") as http:
        answer = await http.post(
            "answerCallbackQuery", json={"callback_query_id": "1", "cache_time": "soon"}
        )

    assert answer.status_code == 400
    assert "cache_time" in answer.json()["description"]


async def test_only_a_button_the_message_shows_can_be_pressed(
    fake: FakeTelegram, bot: telegram.Bot, clock: SecondsClock
) -> None:
    message = await bot.send_message(USER, "Pick tags", reply_markup=tags())
    clock.now += 1.5  # one message per second in a private chat
    plain = await bot.send_message(USER, "no keyboard")

    with pytest.raises(ValueError, match="no button 'sub:tag:gone'"):
        fake.press(USER, message.message_id, "sub:tag:gone", user=USER)
    with pytest.raises(ValueError, match="no button"):
        fake.press(USER, plain.message_id, "sub:done", user=USER)
    with pytest.raises(ValueError, match="no message 99"):
        fake.press(USER, 99, "sub:done", user=USER)


@pytest.mark.parametrize(
    ("button", "reason"),
    [
        (Button("Tag", callback_data="é" * 33), "BUTTON_DATA_INVALID"),  # 66 bytes, 33 chars
        (Button("Tag", callback_data=""), "BUTTON_DATA_INVALID"),
        (Button(" ", callback_data="sub:done"), "BUTTON_TEXT_INVALID"),
    ],
)
async def test_bad_buttons_are_refused_on_edits_too(
    fake: FakeTelegram, bot: telegram.Bot, button: Button, reason: str
) -> None:
    message = await bot.send_message(USER, "Pick tags", reply_markup=tags())
    markup = Markup([[button]])

    on_text = await refused(
        fake, bot.edit_message_text("Pick", USER, message.message_id, reply_markup=markup)
    )
    on_markup = await refused(
        fake, bot.edit_message_reply_markup(USER, message.message_id, reply_markup=markup)
    )

    assert on_text == on_markup == f"Bad Request: {reason}"


async def test_callback_data_of_64_utf8_bytes_is_accepted(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    markup = Markup([[Button("Tag", callback_data="é" * 32)]])

    assert await bot.send_message(USER, "x", reply_markup=markup)


async def test_a_button_with_two_actions_is_refused(fake: FakeTelegram) -> None:
    button = {"text": "Tag", "callback_data": "sub:done", "url": "https://example.com"}
    async with httpx.AsyncClient(base_url=f"{fake.url}/bot{fake.token}/") as http:
        answer = await http.post(
            "sendMessage",
            json={"chat_id": USER, "text": "x", "reply_markup": {"inline_keyboard": [[button]]}},
        )

    assert answer.status_code == 400
    assert answer.json()["description"] == (
        "Bad Request: can't parse inline keyboard button: only one action is allowed"
    )


async def test_toggling_a_tag_swaps_the_keyboard_and_the_new_one_is_pressable(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    message = await bot.send_message(USER, "Pick tags", reply_markup=tags())

    edited = await bot.edit_message_reply_markup(
        USER, message.message_id, reply_markup=tags("breaking")
    )
    same = await refused(
        fake, bot.edit_message_reply_markup(USER, message.message_id, reply_markup=tags("breaking"))
    )
    same_text = await refused(
        fake,
        bot.edit_message_text("Pick tags", USER, message.message_id, reply_markup=tags("breaking")),
    )
    missing = await refused(fake, bot.edit_message_reply_markup(USER, 99, reply_markup=tags()))
    query_id = fake.press(USER, message.message_id, "sub:tag:rollout", user=USER)
    (update,) = await bot.get_updates()

    assert isinstance(edited, telegram.Message) and edited.reply_markup == tags("breaking")
    assert same.startswith("Bad Request: message is not modified")
    assert same_text.startswith("Bad Request: message is not modified")
    assert missing == "Bad Request: message to edit not found"
    assert update.callback_query is not None and update.callback_query.id == query_id
    shown = update.callback_query.message
    assert isinstance(shown, telegram.Message) and shown.reply_markup == tags("breaking")
    assert [m.method for m in fake.sent_to(USER)] == ["sendMessage", "editMessageReplyMarkup"]


async def test_removing_the_keyboard_leaves_nothing_to_press(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    message = await bot.send_message(USER, "Pick tags", reply_markup=tags())

    await bot.edit_message_reply_markup(USER, message.message_id)

    with pytest.raises(ValueError, match="no button"):
        fake.press(USER, message.message_id, "sub:done", user=USER)
