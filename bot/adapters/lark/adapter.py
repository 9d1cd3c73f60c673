"""The Feishu/Lark adapter: events in by the SDK's long connection or by HTTP callbacks.

- `lark.receive: socket` (the default) opens the SDK's long connection (WebSocket), which
  needs no public URL, like Slack's Socket Mode. Feishu authenticates it with the app's id
  and secret, so its events need no signature.
- `lark.receive: webhook` serves `POST /lark/events`: the URL check (challenge), the
  encrypted body (LARK_ENCRYPT_KEY), the signature, the verification token and the replay
  window are checked by `callbacks.open_callback` before anything is read.

Either way every event goes to `LarkInbound.dispatch`, whose answer (a card action's toast
and card) is the callback's answer. Answers to messages run in the adapter's work queue.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from bot.adapters.base import AdapterDeps
from bot.adapters.http_body import BodyTooLargeError, read_capped
from bot.adapters.lark.actions import LarkActions
from bot.adapters.lark.callbacks import (
    MAX_BODY_BYTES,
    CallbackRefused,
    Challenge,
    LarkSecrets,
    open_callback,
)
from bot.adapters.lark.client import LarkClient
from bot.adapters.lark.inbound import LarkInbound
from bot.adapters.lark.members import LarkMembers
from bot.adapters.lark.messages import LarkMessages
from bot.adapters.lark.replier import LarkReplier
from bot.adapters.work import WorkQueue
from bot.logs import log
from bot.settings.lark import LarkReceive

logger = logging.getLogger("prdigest.lark")

EVENTS_PATH = "/lark/events"


class Connection(Protocol):
    """The long connection (bot/adapters/lark/socket.py): events in, answers back."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


@dataclass(frozen=True)
class LarkSettings:
    app_id: str
    app_secret: str
    api_url: str
    receive: LarkReceive
    secrets: LarkSecrets
    admins: tuple[str, ...] = ()


class LarkAdapter:
    name = "lark"

    def __init__(self, deps: AdapterDeps, settings: LarkSettings, client: LarkClient) -> None:
        self.settings = settings
        self.chat = deps.chat
        self.clock = deps.clock
        self.members = LarkMembers(client, settings.admins)
        replier = LarkReplier(client)
        self.work = WorkQueue("lark", deps.work_limits)
        self.inbound = LarkInbound(
            deps.chat,
            settings.app_id,
            LarkMessages(deps, self.members, replier, self.work),
            LarkActions(deps, self.members, replier, self.work),
        )
        self._socket: Connection | None = None

    def routes(self) -> list[BaseRoute]:
        if self.settings.receive is not LarkReceive.WEBHOOK:
            return []
        return [Route(EVENTS_PATH, self.handle_events, methods=["POST"])]

    async def start(self) -> None:
        await self.chat.forget_old_events()
        if self.settings.receive is LarkReceive.SOCKET:
            from bot.adapters.lark.socket import LarkSocket

            settings = self.settings
            self._socket = LarkSocket(
                settings.app_id, settings.app_secret, settings.api_url, self.inbound.dispatch
            )
            await self._socket.start()
        encrypted = self.settings.secrets.encrypt_key is not None
        log(logger, "lark.started", receive=self.settings.receive.value, encrypted=encrypted)

    def stop_taking_work(self) -> None:
        self.work.stop_taking()

    async def stop(self) -> None:
        if self._socket is not None:
            await self._socket.stop()
            self._socket = None
        await self.work.stop()

    async def handle_events(self, request: Request) -> Response:
        """An HTTP callback: checked whole before it is read, then dispatched."""
        try:
            body = await read_capped(request, MAX_BODY_BYTES)
        except BodyTooLargeError:
            return JSONResponse({"msg": "request too large"}, status_code=413)
        now = self.clock().timestamp()
        try:
            opened = open_callback(body, request.headers, self.settings.secrets, now)
        except CallbackRefused as refused:
            log(logger, "lark.callback_refused", logging.WARNING, reason=refused.reason)
            return JSONResponse({"msg": refused.reason}, status_code=refused.status)
        if isinstance(opened, Challenge):
            return JSONResponse({"challenge": opened.challenge})
        return JSONResponse(await self.inbound.dispatch(opened.body) or {})
