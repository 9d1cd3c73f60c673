"""A strict loopback fake of the Feishu/Lark Open API: the tenant token, message create and
reply, the bot's info and a chat's info (its mode, owner and managers).

It accepts only the fields lark-oapi's request models define (introspected from the SDK's
classes), answers in the shapes its response models parse, checks every card (cards.py),
keeps Feishu's rate limits (50/s and 1,000/min per app: HTTP 429, code 99991400; 5 QPS per
chat: code 230020) and drops a message whose `uuid` it saw within the hour, answering with the
message it already has. Failures are scripted per chat:

    async with FakeLark() as fake:
        fake.add_chat("oc_team0001")
        fake.script("oc_team0001", Fault(400, 230002, "The bot can not be outside the group."))
"""

from __future__ import annotations

import itertools
import json
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from aiohttp import web
from lark_oapi.api.contact.v3.model.get_user_request import GetUserRequest
from lark_oapi.api.im.v1.model.create_message_request import CreateMessageRequest
from lark_oapi.api.im.v1.model.create_message_request_body import CreateMessageRequestBody
from lark_oapi.api.im.v1.model.get_chat_request import GetChatRequest
from lark_oapi.api.im.v1.model.message import Message
from lark_oapi.api.im.v1.model.reply_message_request_body import ReplyMessageRequestBody
from lark_oapi.core.token.create_token_request_body import CreateTokenRequestBody

from bot.core.render.limits.lark import (
    LARK_APP_PER_MINUTE,
    LARK_APP_PER_SECOND,
    LARK_PER_CHAT_QPS,
    LARK_UUID_MAX,
    LARK_UUID_WINDOW_SECONDS,
)
from tests.fakes.lark.cards import CardError, check_card
from tests.fakes.lark.ws import FakeLarkSocket
from tests.fakes.loopback import serve

TOKEN_PATH = "/open-apis/auth/v3/tenant_access_token/internal"
MESSAGES_PATH = "/open-apis/im/v1/messages"
BOT_INFO_PATH = "/open-apis/bot/v3/info"
CHATS_PATH = "/open-apis/im/v1/chats"
USERS_PATH = "/open-apis/contact/v3/users"
RESET_SECONDS = 2  # what x-ogw-ratelimit-reset says after a 429
BOT_OPEN_ID = "ou_prdigestbot0001"
OWNER_OPEN_ID = "ou_groupowner0001"


def model_fields(model: type) -> frozenset[str]:
    """The fields an SDK model writes: its `_types`, else the attributes its __init__ sets."""
    types = getattr(model, "_types", None)
    if types:
        return frozenset(types)
    return frozenset(vars(model()))


CREATE_FIELDS = model_fields(CreateMessageRequestBody)
REPLY_FIELDS = model_fields(ReplyMessageRequestBody)
CHAT_QUERIES = frozenset({"user_id_type"})
CHAT_QUERIES = frozenset(vars(GetChatRequest())) & CHAT_QUERIES  # only what the SDK defines
USER_QUERIES = frozenset(vars(GetUserRequest())) & {"user_id_type", "department_id_type"}
TOKEN_FIELDS = model_fields(CreateTokenRequestBody)
CREATE_QUERIES = (
    frozenset(vars(CreateMessageRequest()))
    - frozenset(vars(CreateMessageRequest.__mro__[1]()))
    - {"request_body"}
)
MESSAGE_FIELDS = model_fields(Message)


@dataclass(frozen=True, slots=True)
class Fault:
    """One scripted refusal: the HTTP status, Feishu's code and message."""

    status: int
    code: int
    msg: str = "refused"


@dataclass(frozen=True, slots=True)
class Posted:
    chat_id: str
    message_id: str
    card: dict[str, Any]
    uuid: str | None
    parent_id: str | None
    time: float
    in_thread: bool = False  # a reply with reply_in_thread
    by_bot: bool = True  # False: a person's message the tests said was sent (no card)


@dataclass(frozen=True, slots=True)
class ChatInfo:
    mode: str = "group"  # "group", "topic" or "p2p"
    owner: str = OWNER_OPEN_ID
    managers: tuple[str, ...] = ()


@dataclass(slots=True)
class Call:
    path: str
    status: int
    code: int
    time: float
    body: dict[str, Any] = field(default_factory=dict)


class FakeLark:
    def __init__(
        self,
        app_id: str = "cli_a1b2c3d4e5f6a7b8",
        app_secret: str = "fake-app-secret",
        clock: Callable[[], float] = time.monotonic,
        socket: FakeLarkSocket | None = None,
    ) -> None:
        self.app_id, self.app_secret, self.clock = app_id, app_secret, clock
        self.socket = socket  # the long connection's fake, served from this fake's URL
        self.tokens: list[str] = []
        self.chats: dict[str, bool] = {}  # chat → the bot is in it
        self.infos: dict[str, ChatInfo] = {}
        self.people: dict[str, str] = {}  # open_id → name
        self.posted: list[Posted] = []
        self.calls: list[Call] = []
        self.faults: dict[str, deque[Fault]] = defaultdict(deque)
        self.by_uuid: dict[str, tuple[float, Posted]] = {}
        self.app_window: deque[float] = deque()
        self.chat_window: dict[str, deque[float]] = defaultdict(deque)
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self._port: int | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    async def __aenter__(self) -> FakeLark:
        app = web.Application()
        app.router.add_post(TOKEN_PATH, self._token)
        app.router.add_post(MESSAGES_PATH, self._create)
        app.router.add_post(MESSAGES_PATH + "/{message_id}/reply", self._reply)
        app.router.add_get(BOT_INFO_PATH, self._bot_info)
        app.router.add_get(CHATS_PATH + "/{chat_id}", self._chat_info)
        app.router.add_get(USERS_PATH + "/{user_id}", self._user_info)
        if self.socket is not None:
            self.socket.mount(app)
        self._runner, self._port = await serve(app)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.socket is not None:
            await self.socket.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    # -- test controls -----------------------------------------------------------------------
    def add_chat(
        self,
        chat_id: str,
        *,
        mode: str = "group",
        owner: str = OWNER_OPEN_ID,
        managers: tuple[str, ...] = (),
    ) -> None:
        self.chats[chat_id] = True
        self.infos[chat_id] = ChatInfo(mode, owner, managers)

    def add_person(self, open_id: str, name: str) -> None:
        self.people[open_id] = name

    def user_message(self, chat_id: str) -> str:
        """A person's message in `chat_id` (what an event names): its id, to reply to."""
        message_id = f"om_user{next(self._ids)}"
        self.posted.append(Posted(chat_id, message_id, {}, None, None, self.clock(), by_bot=False))
        return message_id

    def remove_bot(self, chat_id: str) -> None:
        """The bot is removed from the group: sends answer 230002."""
        self.chats[chat_id] = False

    def script(self, chat_id: str, *faults: Fault) -> None:
        self.faults[chat_id].extend(faults)

    def expire_tokens(self) -> None:
        self.tokens.clear()

    def sent_to(self, chat_id: str) -> list[Posted]:
        return [p for p in self.posted if p.chat_id == chat_id and p.by_bot]

    # -- handlers ----------------------------------------------------------------------------
    def _answer(
        self,
        path: str,
        status: int,
        code: int,
        msg: str,
        data: Any = None,
        headers: dict[str, str] | None = None,
        body: Any = None,
    ) -> web.Response:
        self.calls.append(Call(path, status, code, self.clock(), body or {}))
        answer: dict[str, Any] = {"code": code, "msg": msg}
        if data is not None:
            answer["data"] = data
        return web.json_response(answer, status=status, headers=headers)

    async def _body(self, request: web.Request, allowed: frozenset[str]) -> dict[str, Any]:
        body = await request.json()
        if not isinstance(body, dict):
            raise web.HTTPBadRequest(text="body is not a JSON object")
        unknown = set(body) - allowed
        if unknown:
            raise web.HTTPBadRequest(text=f"fields the SDK's model does not define: {unknown}")
        return body

    async def _token(self, request: web.Request) -> web.Response:
        body = await self._body(request, TOKEN_FIELDS)
        if (body.get("app_id"), body.get("app_secret")) != (self.app_id, self.app_secret):
            return self._answer(TOKEN_PATH, 400, 10014, "app secret invalid", body=body)
        token = f"t-fake{next(self._ids)}"
        self.tokens.append(token)
        self.calls.append(Call(TOKEN_PATH, 200, 0, self.clock(), body))
        return web.json_response(
            {"code": 0, "msg": "ok", "tenant_access_token": token, "expire": 7200}
        )

    async def _create(self, request: web.Request) -> web.Response:
        unknown = set(request.query) - CREATE_QUERIES
        if unknown or request.query.get("receive_id_type") not in ("chat_id", "open_id"):
            raise web.HTTPBadRequest(text=f"bad query: {dict(request.query)}")
        body = await self._body(request, CREATE_FIELDS)
        return self._post(MESSAGES_PATH, request, body, str(body.get("receive_id", "")), None)

    async def _reply(self, request: web.Request) -> web.Response:
        body = await self._body(request, REPLY_FIELDS)
        parent_id = request.match_info["message_id"]
        parent = next((p for p in self.posted if p.message_id == parent_id), None)
        path = MESSAGES_PATH + "/:message_id/reply"
        if parent is None:
            return self._answer(path, 400, 230011, "The message was withdrawn.", body=body)
        if not isinstance(body.get("reply_in_thread", False), bool):
            raise web.HTTPBadRequest(text="reply_in_thread is a boolean")
        return self._post(path, request, body, parent.chat_id, parent_id)

    def _authorized(self, request: web.Request) -> bool:
        auth = request.headers.get("Authorization", "")
        return auth.startswith("Bearer ") and auth[7:] in self.tokens

    async def _bot_info(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._answer(BOT_INFO_PATH, 400, 99991663, "Invalid access token")
        self.calls.append(Call(BOT_INFO_PATH, 200, 0, self.clock()))
        bot = {"activate_status": 2, "app_name": "prdigest", "open_id": BOT_OPEN_ID}
        return web.json_response({"code": 0, "msg": "ok", "bot": bot})

    async def _user_info(self, request: web.Request) -> web.Response:
        path = USERS_PATH + "/:user_id"
        if set(request.query) - USER_QUERIES or request.query.get("user_id_type") != "open_id":
            raise web.HTTPBadRequest(text=f"bad query: {dict(request.query)}")
        if not self._authorized(request):
            return self._answer(path, 400, 99991663, "Invalid access token")
        open_id = request.match_info["user_id"]
        if open_id not in self.people:
            return self._answer(path, 400, 41050, "no user authority error")
        user = {"open_id": open_id, "name": self.people[open_id]}
        return self._answer(path, 200, 0, "success", {"user": user})

    async def _chat_info(self, request: web.Request) -> web.Response:
        path = CHATS_PATH + "/:chat_id"
        if set(request.query) - CHAT_QUERIES:
            raise web.HTTPBadRequest(text=f"bad query: {dict(request.query)}")
        if not self._authorized(request):
            return self._answer(path, 400, 99991663, "Invalid access token")
        info = self.infos.get(request.match_info["chat_id"])
        if info is None or not self.chats.get(request.match_info["chat_id"]):
            return self._answer(path, 400, 232011, "the bot is not in the chat")
        id_type = request.query.get("user_id_type", "open_id")
        data = {
            "chat_mode": info.mode,
            "owner_id_type": id_type,
            "owner_id": info.owner,
            "user_manager_id_list": list(info.managers),
        }
        return self._answer(path, 200, 0, "success", data)

    def _post(
        self, path: str, request: web.Request, body: dict[str, Any], chat: str, parent: str | None
    ) -> web.Response:
        if not self._authorized(request):
            return self._answer(path, 400, 99991663, "Invalid access token", body=body)
        now = self.clock()
        limited = self._rate_limited(chat, now)
        if limited is not None:
            return self._answer(path, *limited, body=body)
        if self.faults[chat]:
            fault = self.faults[chat].popleft()
            return self._answer(path, fault.status, fault.code, fault.msg, body=body)
        if not self.chats.get(chat, False):
            msg = "The bot can not be outside the group."
            return self._answer(path, 400, 230002, msg, body=body)
        if body.get("msg_type") != "interactive" or not isinstance(body.get("content"), str):
            return self._answer(path, 400, 230001, "invalid msg_type or content", body=body)
        uuid = body.get("uuid")
        if uuid is not None and (not isinstance(uuid, str) or len(uuid) > LARK_UUID_MAX):
            return self._answer(path, 400, 230001, "invalid uuid", body=body)
        seen = self.by_uuid.get(uuid) if uuid else None
        if seen is not None and now - seen[0] < LARK_UUID_WINDOW_SECONDS:
            return self._answer(path, 200, 0, "success", self._message(seen[1]), body=body)
        try:
            card = check_card(body["content"])
        except (CardError, ValueError) as exc:
            return self._answer(path, 400, 230099, f"Failed to create card content: {exc}")
        in_thread = parent is not None and body.get("reply_in_thread") is True
        posted = Posted(chat, f"om_fake{next(self._ids)}", card, uuid, parent, now, in_thread)
        self.posted.append(posted)
        if uuid:
            self.by_uuid[uuid] = (now, posted)
        return self._answer(path, 200, 0, "success", self._message(posted), body=body)

    def _rate_limited(self, chat: str, now: float) -> tuple[int, int, str, Any, Any] | None:
        """Feishu's limits, counted over every request that reached them."""
        app, window = self.app_window, self.chat_window[chat]
        while app and now - app[0] >= 60:
            app.popleft()
        while window and now - window[0] >= 1:
            window.popleft()
        last_second = sum(1 for t in app if now - t < 1)
        if last_second >= LARK_APP_PER_SECOND or len(app) >= LARK_APP_PER_MINUTE:
            headers = {"x-ogw-ratelimit-limit": "50", "x-ogw-ratelimit-reset": str(RESET_SECONDS)}
            return 429, 99991400, "request trigger frequency limit", None, headers
        if len(window) >= LARK_PER_CHAT_QPS:
            return 400, 230020, "This operation triggers the frequency limit.", None, None
        app.append(now)
        window.append(now)
        return None

    def _message(self, posted: Posted) -> dict[str, Any]:
        """A Message as the SDK's model reads it (only fields it defines)."""
        data = {
            "message_id": posted.message_id,
            "chat_id": posted.chat_id,
            "msg_type": "interactive",
            "create_time": str(int(posted.time * 1000)),
            "body": {"content": json.dumps(posted.card, ensure_ascii=False)},
        }
        if posted.parent_id:
            data |= {"parent_id": posted.parent_id, "root_id": posted.parent_id}
        assert set(data) <= MESSAGE_FIELDS
        return data
