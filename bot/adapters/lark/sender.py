"""Feishu/Lark delivery: one interactive card per outbox row, error codes mapped to outcomes.

Nothing twice: every message carries a `uuid` made from its outbox row's key; Feishu sends a
request whose uuid it has seen within the hour at most once. A row sent again after a kill or a
lost answer (the lease frees it within a minute) is therefore dropped by Feishu, not posted
twice, and Feishu answers with the message it already has. So `find_sent` need not look.

Threaded layouts reply in the parent card's thread (`reply` with `reply_in_thread`); a parent
that is gone (withdrawn or deleted) gets its replies posted flat, never lost.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime

import httpx
from lark_oapi.api.im.v1.model.create_message_request import CreateMessageRequest
from lark_oapi.api.im.v1.model.create_message_request_body import CreateMessageRequestBody
from lark_oapi.api.im.v1.model.create_message_response import CreateMessageResponse
from lark_oapi.api.im.v1.model.reply_message_request import ReplyMessageRequest
from lark_oapi.api.im.v1.model.reply_message_request_body import ReplyMessageRequestBody
from lark_oapi.core.model import BaseRequest

from bot.adapters.lark.client import Answer, LarkClient, TokenUnavailable
from bot.adapters.lark.errors import outcome_of, parent_gone
from bot.core.delivery.port import (
    Outcome,
    Placement,
    Refused,
    Sent,
    TopicAnswer,
    Transient,
    Turn,
    Withheld,
)
from bot.core.models import Platform
from bot.core.render.limits.lark import LARK_MAX_PER_SECOND, LARK_PER_CHAT_INTERVAL, LARK_UUID_MAX

CARD = "interactive"  # msg_type of a card
UUID_PREFIX = "prdigest-"
REPLY_TO = "reply_to"  # the parent message's id, in a placed payload


def message_uuid(key: str) -> str:
    """The row's key as a uuid Feishu accepts (at most 50 characters): as it is when it
    fits, else a digest of it (the same key always gives the same uuid)."""
    uuid = UUID_PREFIX + key
    if len(uuid) <= LARK_UUID_MAX:
        return uuid
    digest = hashlib.sha256(key.encode()).hexdigest()
    return UUID_PREFIX + digest[: LARK_UUID_MAX - len(UUID_PREFIX)]


def receive_id_type(target: str) -> str:
    """`oc_…` is a group chat, `ou_…` a user (open_id)."""
    return "open_id" if target.startswith("ou_") else "chat_id"


class LarkSender:
    platform = Platform.LARK
    max_per_second = LARK_MAX_PER_SECOND

    def __init__(self, client: LarkClient) -> None:
        self.client = client

    def interval_for(self, target: str) -> float:
        return LARK_PER_CHAT_INTERVAL

    async def warm_up(self) -> None:
        """The tenant token, fetched before a burst (its errors are the first send's)."""
        try:
            await self.client.token()
        except (httpx.HTTPError, TokenUnavailable):
            return

    def tagged(self, payload: Mapping[str, object], key: str) -> dict[str, object]:
        return {**payload, "uuid": message_uuid(key)}

    async def find_sent(
        self, target: str, payload: Mapping[str, object], key: str, since: datetime
    ) -> Sent | None:
        """None: the row is sent again with the same uuid, and Feishu drops the repeat."""
        return None

    def placed(self, payload: Mapping[str, object], placement: Placement) -> dict[str, object]:
        """A reply in the parent card's thread. Feishu has no forum topics."""
        placed = dict(payload)
        if placement.reply_to is not None:
            placed[REPLY_TO] = placement.reply_to
        return placed

    async def open_topic(self, target: str, name: str) -> TopicAnswer:
        return Refused("Feishu has no forum topics")

    def topic_gone(self, reason: str) -> bool:
        return False

    async def send(self, target: str, payload: Mapping[str, object], turn: Turn) -> Outcome:
        if not await turn():
            return Withheld()
        content = json.dumps(payload.get("card") or {}, ensure_ascii=False)
        uuid = str(payload.get("uuid") or "") or None
        parent = payload.get(REPLY_TO)
        if parent:
            outcome = await self._post(_reply(str(parent), content, uuid))
            if not parent_gone(outcome):
                return outcome
        return await self._post(_create(target, content, uuid))

    async def _post(self, request: BaseRequest) -> Outcome:
        try:
            answer = await self.client.call(request)
        except httpx.HTTPError as exc:
            return Transient(type(exc).__name__)
        except TokenUnavailable as exc:
            return Transient(exc.reason)
        return _outcome(answer)

    async def close(self) -> None:
        await self.client.close()


def _create(target: str, content: str, uuid: str | None) -> BaseRequest:
    body = CreateMessageRequestBody.builder().receive_id(target).msg_type(CARD).content(content)
    if uuid is not None:
        body = body.uuid(uuid)
    builder = CreateMessageRequest.builder().receive_id_type(receive_id_type(target))
    return builder.request_body(body.build()).build()


def _reply(parent: str, content: str, uuid: str | None) -> BaseRequest:
    body = ReplyMessageRequestBody.builder().msg_type(CARD).content(content).reply_in_thread(True)
    if uuid is not None:
        body = body.uuid(uuid)
    return ReplyMessageRequest.builder().message_id(parent).request_body(body.build()).build()


def _outcome(answer: Answer) -> Outcome:
    parsed = CreateMessageResponse(answer.body)  # a reply answers with the same shape
    if answer.status == 200 and parsed.success():
        message_id = parsed.data.message_id if parsed.data is not None else None
        return Sent(str(message_id) if message_id else None)
    return outcome_of(answer.status, answer.code, str(parsed.msg or ""), answer.headers)
