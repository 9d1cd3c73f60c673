"""A message to the bot (`im.message.receive_v1`): its words answered in its thread.

In a group the bot answers a message that @mentions it; in a one-to-one chat every message.
The words are read as everywhere else (`words.request_of`), the answer comes from
`ChatService`, and goes back as cards replying to the asking message: in its thread in a
group, quoting it in a one-to-one chat. A group's subscriptions change only for its owner, its
managers and `lark.admins` (`members.is_admin`, asked only when a command needs it); in a
one-to-one chat the person owns them. When a group's subscription changed, the answer is
the announcement, which names who changed what.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import partial
from typing import Any

from bot.adapters.answering import UNAVAILABLE, answer_messages
from bot.adapters.lark.handler import LarkHandler
from bot.adapters.lark.members import P2P
from bot.adapters.lark.words import message_words, request_of
from bot.chat.answers import Chat, Notice, Reply
from bot.core.models import Format, Platform
from bot.logs import log

logger = logging.getLogger("prdigest.lark")

HOW_TO_ASK = Notice("how_to_ask")


def event_str(obj: Any, *names: str) -> str:
    """A string nested in the event's JSON (`sender.sender_id.open_id`); "" when absent."""
    for name in names:
        obj = obj.get(name) if isinstance(obj, Mapping) else None
    return obj if isinstance(obj, str) else ""


class LarkMessages(LarkHandler):
    def on_message(self, event: Mapping[str, Any]) -> None:
        """Queue the answer (the event's acknowledgement must not wait for it)."""
        message = event.get("message")
        if not isinstance(message, Mapping) or event_str(event, "sender", "sender_type") != "user":
            return  # another bot's or the system's message
        user = event_str(event, "sender", "sender_id", "open_id")
        chat_id = event_str(message, "chat_id")
        if not user or not chat_id:
            return
        self.work.submit(user, partial(self._answer, message, user), chat=chat_id)

    async def _answer(self, message: Mapping[str, Any], user: str) -> None:
        chat_id, message_id = event_str(message, "chat_id"), event_str(message, "message_id")
        private = event_str(message, "chat_type") == P2P
        mentions = message.get("mentions")
        said = message_words(
            event_str(message, "message_type"),
            event_str(message, "content"),
            mentions if isinstance(mentions, list) else [],
            await self.members.bot_open_id(),
        )
        if said is not None and not private and not said.addressed:
            return
        chat = await self.service.chat_at(
            Platform.LARK,
            chat_id,
            user,
            private=private,
            is_admin=partial(self.members.is_admin, chat_id, user),
            user_name=await self.members.name_of(user),
        )
        reading = request_of(said.words) if said is not None else None
        if reading is None:
            if private or said is not None:  # a group's image that @mentions us: no hint
                await self._reply(chat, message_id, HOW_TO_ASK)
            log(logger, "lark.text_unread", chat=chat_id)
            return
        try:
            answer = await self.service.answer_text(reading, chat)
        except Exception as error:
            if not self.service.is_outage(error):
                raise
            await self._reply(chat, message_id, UNAVAILABLE)
            return
        shown = answer.announce if answer.announce is not None and not private else answer.reply
        log(logger, "lark.command", chat=chat_id, reply=_kind(shown))
        await self._reply(chat, message_id, shown)

    async def _reply(self, chat: Chat, message_id: str, reply: Reply) -> None:
        rendered = await answer_messages(self.renderer, reply, Format.LARK, chat.locale)
        await self.replier.reply(chat.chat_id, message_id, rendered, in_thread=not chat.private)


def _kind(reply: Reply) -> str:
    return reply.key if isinstance(reply, Notice) else type(reply).__name__
