"""Realistic answers of the fake Telegram Bot API, one handler per method.

Every handler gets parameters already checked against the spec and returns the `result`; it
raises `BotApiError` for an error answer. A spec method without a handler answers `true`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable

from tests.fakes.telegram.forum import create_forum_topic, placement
from tests.fakes.telegram.keyboards import (
    NOT_MODIFIED,
    edit_message_reply_markup,
    message_to_edit,
)
from tests.fakes.telegram.messages import check_reply_markup, parse_text
from tests.fakes.telegram.polling import (
    delete_webhook,
    get_updates,
    get_webhook_info,
    set_webhook,
)
from tests.fakes.telegram.spec import BotApiError, as_int, bad_request, complete
from tests.fakes.telegram.state import ADMIN_STATUSES, BotState, FakeChat, SentMessage

Handler = Callable[[BotState, dict[str, object]], Awaitable[object]]

COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")
MAX_COMMANDS = 100
MAX_COMMAND_DESCRIPTION = 256
MAX_CALLBACK_ANSWER = 200
# Sends count towards flood limits; edits and chat actions do not.
FLOOD_COUNTED = re.compile(r"send(?!chataction)\w+|copymessages?|forwardmessages?")


async def get_me(state: BotState, params: dict[str, object]) -> object:
    bot = dict(state.bot_user)
    bot.update(can_join_groups=True, can_read_all_group_messages=False)
    return complete(state.spec, "User", bot)


async def set_my_commands(state: BotState, params: dict[str, object]) -> object:
    commands = params["commands"]
    assert isinstance(commands, list)
    if len(commands) > MAX_COMMANDS:
        raise bad_request("too many commands")
    for command in commands:
        if not COMMAND_NAME.fullmatch(str(command["command"])):
            raise bad_request("BOT_COMMAND_INVALID")
        if not 1 <= len(str(command["description"]).strip()) <= MAX_COMMAND_DESCRIPTION:
            raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
    state.commands[_commands_key(params)] = commands
    return True


async def get_my_commands(state: BotState, params: dict[str, object]) -> object:
    return state.commands.get(_commands_key(params), [])


async def delete_my_commands(state: BotState, params: dict[str, object]) -> object:
    state.commands.pop(_commands_key(params), None)
    return True


def _commands_key(params: dict[str, object]) -> str:
    scope = params.get("scope") or {"type": "default"}
    return json.dumps([scope, params.get("language_code", "")], sort_keys=True)


async def send_message(state: BotState, params: dict[str, object]) -> object:
    chat = state.chat(params["chat_id"])
    sent = _accept_text(state, "sendMessage", chat, params, message_id=None)
    return state.message_object(chat, sent, edited=False)


async def edit_message_text(state: BotState, params: dict[str, object]) -> object:
    if "inline_message_id" in params:
        parse_text(str(params["text"]), _parse_mode(params), params.get("entities"))
        return True
    chat, old = message_to_edit(state, params)
    sent = _accept_text(state, "editMessageText", chat, params, message_id=old.message_id)
    return state.message_object(chat, sent, edited=True)


def _parse_mode(params: dict[str, object]) -> str | None:
    value = params.get("parse_mode")
    return str(value) if value else None


def _accept_text(
    state: BotState,
    method: str,
    chat: FakeChat,
    params: dict[str, object],
    message_id: int | None,
) -> SentMessage:
    text = str(params["text"])
    plain, entities = parse_text(text, _parse_mode(params), params.get("entities"))
    check_reply_markup(params.get("reply_markup"))
    thread, reply_to = placement(chat, params) if message_id is None else (None, None)
    markup = params.get("reply_markup")
    if message_id is not None:
        old = chat.messages[message_id]
        if (
            old.plain_text == plain
            and old.entities == tuple(entities)
            and old.reply_markup == markup
        ):
            raise bad_request(NOT_MODIFIED)
    else:
        _check_bot_can_write(state, chat)
        admitted = state.flood.admit(chat.id)
        if admitted is not None:
            raise too_many_requests(admitted.retry_after)
        message_id = chat.next_message_id()
    sent = SentMessage(
        method=method,
        chat_id=chat.id,
        message_id=message_id,
        text=text,
        plain_text=plain,
        parse_mode=_parse_mode(params),
        entities=tuple(entities),
        reply_markup=markup if isinstance(markup, dict) else None,
        time=state.flood.clock(),
        message_thread_id=thread,
        reply_to=reply_to,
    )
    chat.messages[message_id] = sent
    state.sent.append(sent)
    return sent


def too_many_requests(retry_after: int) -> BotApiError:
    description = f"Too Many Requests: retry after {retry_after}"
    return BotApiError(429, description, {"retry_after": retry_after})


def _check_bot_can_write(state: BotState, chat: FakeChat) -> None:
    status = state.member_status(chat, state.bot_id)
    kind = "supergroup" if chat.type == "supergroup" else "group"
    if status == "kicked":
        raise BotApiError(403, f"Forbidden: bot was kicked from the {kind} chat")
    if status == "left":
        raise BotApiError(403, f"Forbidden: bot is not a member of the {kind} chat")


async def answer_callback_query(state: BotState, params: dict[str, object]) -> object:
    query_id = str(params["callback_query_id"])
    if query_id not in state.callback_query_ids:
        raise bad_request("query is too old and response timeout expired or query ID is invalid")
    if len(str(params.get("text", ""))) > MAX_CALLBACK_ANSWER:
        raise bad_request("MESSAGE_TOO_LONG")
    state.callback_query_ids.discard(query_id)
    state.answered_callbacks.append(params)
    return True


async def get_chat(state: BotState, params: dict[str, object]) -> object:
    chat = state.chat(params["chat_id"])
    info = chat.to_api()
    info.update(accent_color_id=0, max_reaction_count=11)
    return complete(state.spec, "ChatFullInfo", info)


async def get_chat_member(state: BotState, params: dict[str, object]) -> object:
    chat = state.chat(params["chat_id"])
    return state.chat_member(chat, as_int(params["user_id"]))


async def get_chat_administrators(state: BotState, params: dict[str, object]) -> object:
    chat = state.chat(params["chat_id"])
    if chat.type == "private":
        raise bad_request("there are no administrators in the private chat")
    admins = [uid for uid, status in chat.members.items() if status in ADMIN_STATUSES]
    return [state.chat_member(chat, user_id) for user_id in admins]


async def get_chat_member_count(state: BotState, params: dict[str, object]) -> object:
    chat = state.chat(params["chat_id"])
    present = ("creator", "administrator", "member", "restricted")
    return max(1, sum(1 for status in chat.members.values() if status in present))


async def delete_message(state: BotState, params: dict[str, object]) -> object:
    chat = state.chat(params["chat_id"])
    if chat.messages.pop(as_int(params["message_id"]), None) is None:
        raise bad_request("message to delete not found")
    return True


async def leave_chat(state: BotState, params: dict[str, object]) -> object:
    chat = state.chat(params["chat_id"])
    chat.members[state.bot_id] = "left"
    return True


HANDLERS: dict[str, Handler] = {
    "getMe": get_me,
    "setMyCommands": set_my_commands,
    "getMyCommands": get_my_commands,
    "deleteMyCommands": delete_my_commands,
    "setWebhook": set_webhook,
    "deleteWebhook": delete_webhook,
    "getWebhookInfo": get_webhook_info,
    "getUpdates": get_updates,
    "sendMessage": send_message,
    "editMessageText": edit_message_text,
    "editMessageReplyMarkup": edit_message_reply_markup,
    "answerCallbackQuery": answer_callback_query,
    "getChat": get_chat,
    "getChatMember": get_chat_member,
    "getChatAdministrators": get_chat_administrators,
    "getChatMemberCount": get_chat_member_count,
    "deleteMessage": delete_message,
    "leaveChat": leave_chat,
    "createForumTopic": create_forum_topic,
}


def counts_towards_flood(method: str) -> bool:
    return FLOOD_COUNTED.fullmatch(method.lower()) is not None
