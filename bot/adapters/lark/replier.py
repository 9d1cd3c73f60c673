"""Answers on Feishu: cards in the thread of the asking message (or new in the chat).

A group's and a user's messages are limited to 5 per second (shared by the group's bots), so
the replies to one chat leave at least `LARK_PER_CHAT_INTERVAL` apart, like its digests. A
refused reply is logged with its code and not retried: the person asks again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lark_oapi.api.im.v1.model.create_message_request import CreateMessageRequest
from lark_oapi.api.im.v1.model.create_message_request_body import CreateMessageRequestBody
from lark_oapi.api.im.v1.model.create_message_response import CreateMessageResponse
from lark_oapi.api.im.v1.model.reply_message_request import ReplyMessageRequest
from lark_oapi.api.im.v1.model.reply_message_request_body import ReplyMessageRequestBody
from lark_oapi.core.model import BaseRequest

from bot.adapters.lark.client import LarkClient
from bot.adapters.lark.sender import CARD, receive_id_type
from bot.core.render.limits.lark import LARK_PER_CHAT_INTERVAL
from bot.core.render.renderer import RenderedMessage
from bot.logs import log

logger = logging.getLogger("prdigest.lark")

MAX_PACED_CHATS = 4096


def card_content(message: RenderedMessage | Mapping[str, Any]) -> str:
    """A rendered message's card as the API's `content` string."""
    payload = message.payload if isinstance(message, RenderedMessage) else message
    return json.dumps(payload.get("card") or {}, ensure_ascii=False)


class ChatPace:
    """At most one message to a chat every `interval` seconds, in the order asked."""

    def __init__(
        self, interval: float = LARK_PER_CHAT_INTERVAL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.interval = interval
        self.clock = clock
        self._next: OrderedDict[str, float] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    async def turn(self, chat_id: str) -> None:
        lock = self._locks.setdefault(chat_id, asyncio.Lock())
        async with lock:
            wait = self._next.get(chat_id, 0.0) - self.clock()
            if wait > 0:
                await asyncio.sleep(wait)
            self._next[chat_id] = self.clock() + self.interval
            self._next.move_to_end(chat_id)
            while len(self._next) > MAX_PACED_CHATS:
                gone, _ = self._next.popitem(last=False)
                if not self._locks[gone].locked():
                    del self._locks[gone]


class LarkReplier:
    def __init__(self, client: LarkClient, pace: ChatPace | None = None) -> None:
        self.client = client
        self.pace = pace or ChatPace()

    async def reply(
        self,
        chat_id: str,
        message_id: str,
        messages: Sequence[RenderedMessage],
        *,
        in_thread: bool = True,
    ) -> list[str]:
        """Each message as a reply to `message_id`: in its thread (a group), or quoting it
        (a one-to-one chat, which has no threads); the ids posted."""
        posted: list[str] = []
        for message in messages:
            body = ReplyMessageRequestBody.builder().msg_type(CARD).content(card_content(message))
            body = body.reply_in_thread(in_thread)
            request = ReplyMessageRequest.builder().message_id(message_id)
            sent = await self._post(chat_id, request.request_body(body.build()).build())
            if sent is None:
                break
            posted.append(sent)
        return posted

    async def send(self, chat_id: str, messages: Sequence[RenderedMessage]) -> list[str]:
        """Each message as a new message in the chat (a one-to-one chat's answer to a press)."""
        posted: list[str] = []
        for message in messages:
            body = CreateMessageRequestBody.builder().receive_id(chat_id).msg_type(CARD)
            body = body.content(card_content(message))
            request = CreateMessageRequest.builder().receive_id_type(receive_id_type(chat_id))
            sent = await self._post(chat_id, request.request_body(body.build()).build())
            if sent is None:
                break
            posted.append(sent)
        return posted

    async def _post(self, chat_id: str, request: BaseRequest) -> str | None:
        """The message id; None when Feishu refused or was unreachable."""
        await self.pace.turn(chat_id)
        answer = await self.client.ask(request, "lark.reply_unreachable")
        if answer is None:
            return None
        parsed = CreateMessageResponse(answer.body)
        if answer.status != 200 or not parsed.success():
            log(logger, "lark.reply_refused", logging.WARNING, code=answer.code, msg=parsed.msg)
            return None
        data = parsed.data
        return str(data.message_id) if data is not None and data.message_id else ""
