"""Inline keyboards after they are sent: pressing a button, and editMessageReplyMarkup.

A test may press only a button the chat shows now (the message's current keyboard), as a user
can; the bot then answers the query once (answerCallbackQuery) and may swap the keyboard.
"""

from __future__ import annotations

from dataclasses import replace

from tests.fakes.telegram.messages import check_reply_markup
from tests.fakes.telegram.spec import as_int, bad_request
from tests.fakes.telegram.state import BotState, FakeChat, SentMessage
from tests.fakes.telegram.updates import callback_query_update

NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are exactly the "
    "same as a current content and reply markup of the message"
)


def shown_callback_data(sent: SentMessage) -> list[str]:
    """The callback_data of every button of the keyboard under a message, row by row."""
    markup = sent.reply_markup or {}
    rows = markup.get("inline_keyboard")
    return [
        str(button["callback_data"])
        for row in (rows if isinstance(rows, list) else [])
        for button in row
        if "callback_data" in button
    ]


def press_update(
    state: BotState, chat_id: int, message_id: int, data: str, user_id: int
) -> dict[str, object]:
    """The callback_query update for `user_id` pressing the button carrying `data`."""
    sent = state.chat(chat_id).messages.get(message_id)
    if sent is None:
        raise ValueError(f"chat {chat_id} shows no message {message_id}")
    if data not in shown_callback_data(sent):
        shown = shown_callback_data(sent)
        raise ValueError(f"message {message_id} has no button {data!r}; it shows {shown}")
    return callback_query_update(state, chat_id, message_id, data, user_id)


def message_to_edit(state: BotState, params: dict[str, object]) -> tuple[FakeChat, SentMessage]:
    """The chat and the bot's message an edit names, or Telegram's 400 for what is missing."""
    if "chat_id" not in params:
        raise bad_request("chat_id is empty")
    if "message_id" not in params:
        raise bad_request("message identifier is not specified")
    chat = state.chat(params["chat_id"])
    old = chat.messages.get(as_int(params["message_id"]))
    if old is None:
        raise bad_request("message to edit not found")
    return chat, old


async def edit_message_reply_markup(state: BotState, params: dict[str, object]) -> object:
    """Swap (or, without reply_markup, remove) the keyboard under a message the bot sent."""
    markup = params.get("reply_markup")
    check_reply_markup(markup)
    if "inline_message_id" in params:
        return True
    chat, old = message_to_edit(state, params)
    new_markup = markup if isinstance(markup, dict) else None
    if old.reply_markup == new_markup:
        raise bad_request(NOT_MODIFIED)
    sent = replace(
        old,
        method="editMessageReplyMarkup",
        reply_markup=new_markup,
        time=state.flood.clock(),
    )
    chat.messages[sent.message_id] = sent
    state.sent.append(sent)
    return state.message_object(chat, sent, edited=True)
