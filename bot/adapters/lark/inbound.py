"""Every event Feishu sends the bot, by type, whichever way it came (HTTP or long connection).

`dispatch` takes an event's verified v2 body and returns the callback's answer (a card
action's toast and card) or None. An event seen before (Feishu redelivers one whose answer
it did not get; a replayed request) is answered with nothing and not handled again: its
`event_id` goes through the same store-backed dedupe as Slack's and Telegram's events.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from bot.adapters.lark.actions import LarkActions
from bot.adapters.lark.messages import LarkMessages, event_str
from bot.chat.service import ChatService
from bot.core.models import Platform
from bot.logs import log

logger = logging.getLogger("prdigest.lark")

MESSAGE = "im.message.receive_v1"
CARD_ACTION = "card.action.trigger"
BOT_ADDED = "im.chat.member.bot.added_v1"
BOT_DELETED = "im.chat.member.bot.deleted_v1"
DISBANDED = "im.chat.disbanded_v1"
EVENT_KEY_PREFIX = "lark:"


class LarkInbound:
    def __init__(
        self, service: ChatService, app_id: str, messages: LarkMessages, actions: LarkActions
    ) -> None:
        self.service = service
        self.app_id = app_id
        self.messages = messages
        self.actions = actions

    async def dispatch(self, body: Mapping[str, Any]) -> dict[str, Any] | None:
        header = body.get("header")
        event = body.get("event")
        if not isinstance(header, Mapping) or not isinstance(event, Mapping):
            return None
        kind, event_id = event_str(header, "event_type"), event_str(header, "event_id")
        first = await self.service.first_time(f"{EVENT_KEY_PREFIX}{self.app_id}:{event_id}")
        if first is False:
            log(logger, "lark.event_repeated", event=kind, event_id=event_id)
            return None
        # first is None: the store is down; the handler's own store call fails and says so
        return await self._handle(kind, event)

    async def _handle(self, kind: str, event: Mapping[str, Any]) -> dict[str, Any] | None:
        chat_id = event_str(event, "chat_id")
        if kind == MESSAGE:
            self.messages.on_message(event)
        elif kind == CARD_ACTION:
            return await self.actions.on_action(event)
        elif kind in (BOT_DELETED, DISBANDED) and chat_id:
            status = "removed" if kind == BOT_DELETED else "disbanded"
            await self.service.bot_removed(Platform.LARK, chat_id, status)
        elif kind == BOT_ADDED and chat_id:
            await self.service.bot_back(Platform.LARK, chat_id)
        else:
            log(logger, "lark.event_ignored", event=kind)
        return None
