"""Builders of the Updates a user's actions produce, for `FakeTelegram.push_*`."""

from __future__ import annotations

import itertools
import time

from tests.fakes.telegram.html import utf16_len
from tests.fakes.telegram.state import BotState, user_object

_callback_ids = itertools.count(1)


def message_update(
    state: BotState, chat_id: int, text: str, user_id: int | None
) -> dict[str, object]:
    """A `message` update: `text` from `user_id` (default: the private chat's user) in the chat."""
    chat = state.chat(chat_id)
    sender = user_id if user_id is not None else chat_id
    if sender <= 0:
        raise ValueError("a message in a group needs the user_id of its sender")
    message: dict[str, object] = {
        "message_id": chat.next_message_id(),
        "from": user_object(sender),
        "date": int(time.time()),
        "chat": chat.to_api(),
        "text": text,
    }
    if text.startswith("/"):
        command = text.split(maxsplit=1)[0]
        message["entities"] = [{"type": "bot_command", "offset": 0, "length": utf16_len(command)}]
    return {"message": message}


def callback_query_update(
    state: BotState, chat_id: int, message_id: int, data: str, user_id: int
) -> dict[str, object]:
    """A `callback_query` update: `user_id` pressed a button carrying `data` under a message."""
    chat = state.chat(chat_id)
    sent = chat.messages.get(message_id)
    if sent is None:
        raise ValueError(f"the bot sent no message {message_id} to chat {chat_id}")
    return {
        "callback_query": {
            "id": str(next(_callback_ids)),
            "from": user_object(user_id),
            "message": state.message_object(chat, sent, edited=False),
            "chat_instance": str(chat_id),
            "data": data,
        }
    }
