"""A strict loopback fake of Feishu's long connection (what lark-oapi's `ws.Client` speaks).

`POST /callback/ws/endpoint` takes `{"AppID", "AppSecret"}` and answers
`{"code": 0, "msg": "ok", "data": {"URL": ..., "ClientConfig": {...}}}` with a one-time ticket
in the URL; wrong credentials get HTTP 200 and a non-zero code, as Feishu answers them
(`{"code":1000040346,"msg":"app_id is invalid","data":{"URL":""}}`, seen from the real
endpoint for an unknown app id; the fake answers a wrong secret the same way). The WebSocket
speaks the SDK's protobuf `Frame` (built and parsed with its own pb module): pings get a pong
carrying the ClientConfig, events go out as DATA frames (`type` "event", a message id, a trace
id, `sum`/`seq` when split), and the client's answer, the same frame with the payload
`{"code": 200, "data": base64(JSON)}`, is checked and recorded. Every frame either way is
kept in `frames`; protocol faults land in `errors`, which a test asserts is empty.

    async with FakeLarkSocket() as fake:
        socket = LarkSocket(fake.app_id, fake.app_secret, fake.url, dispatch)
        await socket.start()
        await fake.connected()
        answer = await fake.push_card_action(card_action_event(...))
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import uuid
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import urlencode

from aiohttp import WSMsgType, web
from lark_oapi.ws.const import AUTH_FAILED as HANDSHAKE_AUTH_FAILED
from lark_oapi.ws.const import (
    EXCEED_CONN_LIMIT,
    GEN_ENDPOINT_URI,
    HEADER_BIZ_RT,
    HEADER_HANDSHAKE_AUTH_ERRCODE,
    HEADER_HANDSHAKE_MSG,
    HEADER_HANDSHAKE_STATUS,
    HEADER_MESSAGE_ID,
    HEADER_SEQ,
    HEADER_SUM,
    HEADER_TRACE_ID,
    HEADER_TYPE,
)
from lark_oapi.ws.enum import FrameType, MessageType
from lark_oapi.ws.pb.pbbp2_pb2 import Frame

from tests.fakes.loopback import serve

WS_PATH = "/ws/v2"
SERVICE_ID = 33554678
INVALID_APP = 1000040346  # the endpoint's code for credentials it does not know
# Feishu's defaults; a test may shorten them (the SDK takes them from the endpoint and pongs).
CLIENT_CONFIG = {"ReconnectCount": -1, "ReconnectInterval": 120, "ReconnectNonce": 30,
                 "PingInterval": 120}  # fmt: skip
MAX_CONNECTIONS = 50  # per app; one more is refused at the handshake


@dataclass(frozen=True, slots=True)
class Recorded:
    """One frame: "out" from the fake, "in" from the client."""

    direction: str
    method: int
    headers: dict[str, str]
    payload: bytes


@dataclass(frozen=True, slots=True)
class Reply:
    """The client's answer to one pushed event: the status and its decoded data."""

    code: int
    data: dict[str, Any] | None
    headers: dict[str, str]


@dataclass(slots=True)
class _Connection:
    ws: web.WebSocketResponse
    device_id: str
    outbox: asyncio.Queue[bytes] = field(default_factory=asyncio.Queue)


def frame_headers(frame: Any) -> dict[str, str]:
    return {h.key: h.value for h in frame.headers}


class FakeLarkSocket:
    def __init__(
        self,
        app_id: str = "cli_a1b2c3d4e5f6a7b8",
        app_secret: str = "fake-app-secret",
        client_config: dict[str, int] | None = None,
    ) -> None:
        self.app_id, self.app_secret = app_id, app_secret
        self.client_config = {**CLIENT_CONFIG, **(client_config or {})}
        self.endpoint_calls: list[dict[str, Any]] = []
        self.frames: list[Recorded] = []
        self.errors: list[str] = []
        self.replies: dict[str, Reply] = {}
        self.handshakes = 0  # WebSocket connections accepted, reconnections included
        self._tickets: set[str] = set()
        self._open: list[_Connection] = []
        self._waiting: dict[str, asyncio.Future[Reply]] = {}
        self._changed = asyncio.Condition()
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self._port: int | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def mount(self, app: web.Application) -> None:
        """Serve the endpoint and the WebSocket from `app` (the fake Open API's own server, so
        one base URL serves both, as Feishu's does)."""
        app.router.add_post(GEN_ENDPOINT_URI, self._endpoint)
        app.router.add_get(WS_PATH, self._websocket)

    async def close(self) -> None:
        """Close every open connection from the server's side."""
        for connection in list(self._open):
            await connection.ws.close()

    async def __aenter__(self) -> FakeLarkSocket:
        app = web.Application()
        self.mount(app)
        self._runner, self._port = await serve(app)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def url(self) -> str:
        """The Open API base (what the SDK calls `domain`)."""
        return f"http://127.0.0.1:{self._port}"

    @property
    def open_connections(self) -> int:
        return len(self._open)

    # -- test controls -----------------------------------------------------------------------
    async def connected(self, handshakes: int = 1, timeout: float = 10.0) -> None:
        """Wait until a connection is open and `handshakes` were accepted in all."""

        def ready() -> bool:
            return bool(self._open) and self.handshakes >= handshakes

        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(ready), timeout)

    def push_event(self, body: dict[str, Any], *, parts: int = 1) -> str:
        """Send `body` to the newest connection as an event (in `parts` frames, as Feishu
        splits a large one); its message id, whose answer `reply` awaits."""
        if not self._open:
            raise RuntimeError("no client is connected")
        connection = self._open[-1]
        message_id, trace_id = f"msg_{uuid.uuid4().hex}", uuid.uuid4().hex
        payload = json.dumps(body, ensure_ascii=False).encode()
        size = -(-len(payload) // parts)
        for seq in range(parts):
            headers = {
                HEADER_TYPE: MessageType.EVENT.value,
                HEADER_MESSAGE_ID: message_id,
                HEADER_TRACE_ID: trace_id,
                HEADER_SUM: str(parts),
                HEADER_SEQ: str(seq),
            }
            chunk = payload[seq * size : (seq + 1) * size]
            connection.outbox.put_nowait(self._frame(FrameType.DATA, headers, chunk))
        self._waiting[message_id] = asyncio.get_running_loop().create_future()
        return message_id

    async def reply(self, message_id: str, timeout: float = 10.0) -> Reply:
        """The client's answer to a pushed event."""
        return await asyncio.wait_for(asyncio.shield(self._waiting[message_id]), timeout)

    async def push_card_action(
        self, body: dict[str, Any], *, parts: int = 1, timeout: float = 10.0
    ) -> dict[str, Any]:
        """Push a card.action.trigger (Feishu sends it as an "event" frame over the long
        connection) and return the client's decoded answer ({} when it answered none)."""
        reply = await self.reply(self.push_event(body, parts=parts), timeout)
        if reply.code != 200:
            raise AssertionError(f"the client answered the card action with {reply.code}")
        return reply.data or {}

    async def drop(self) -> None:
        """Close the newest connection from the server's side (the client should reconnect)."""
        await self._open[-1].ws.close()

    # -- the endpoint ------------------------------------------------------------------------
    async def _endpoint(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.endpoint_calls.append(body)
        if set(body) - {"AppID", "AppSecret", "ClientAssertion"}:
            self.errors.append(f"endpoint: unexpected fields {sorted(body)}")
        if body.get("AppID") != self.app_id or body.get("AppSecret") != self.app_secret:
            return web.json_response(
                {"code": INVALID_APP, "msg": "app_id is invalid", "data": {"URL": ""}}
            )
        ticket = uuid.uuid4().hex
        self._tickets.add(ticket)
        query = {
            "fpid": "493",
            "aid": "552564",
            "device_id": str(next(self._ids)),
            "access_key": uuid.uuid4().hex,
            "service_id": str(SERVICE_ID),
            "ticket": ticket,
        }
        url = f"ws://{request.host}{WS_PATH}?{urlencode(query)}"
        data = {"URL": url, "ClientConfig": self.client_config}
        return web.json_response({"code": 0, "msg": "ok", "data": data})

    # -- the WebSocket -----------------------------------------------------------------------
    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        ticket = request.query.get("ticket", "")
        if ticket not in self._tickets:  # a ticket serves one handshake
            return _refuse(403, "ticket is invalid or used")
        self._tickets.discard(ticket)
        if len(self._open) >= MAX_CONNECTIONS:
            return _refuse(HANDSHAKE_AUTH_FAILED, "exceed connection limit", EXCEED_CONN_LIMIT)
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        connection = _Connection(ws, request.query["device_id"])
        writer = asyncio.create_task(self._write(connection))
        async with self._changed:
            self._open.append(connection)
            self.handshakes += 1
            self._changed.notify_all()
        try:
            async for message in ws:
                if message.type == WSMsgType.BINARY:
                    await self._receive(connection, message.data)
                elif message.type == WSMsgType.TEXT:
                    self.errors.append("a text message; the protocol is binary frames")
        finally:
            writer.cancel()
            async with self._changed:
                self._open.remove(connection)
                self._changed.notify_all()
        return ws

    async def _write(self, connection: _Connection) -> None:
        while True:
            data = await connection.outbox.get()
            await connection.ws.send_bytes(data)

    async def _receive(self, connection: _Connection, data: bytes) -> None:
        frame: Any = Frame()
        frame.ParseFromString(data)
        headers = frame_headers(frame)
        self.frames.append(Recorded("in", frame.method, headers, bytes(frame.payload)))
        if frame.service != SERVICE_ID:
            self.errors.append(f"a frame for service {frame.service}, not {SERVICE_ID}")
        kind = headers.get(HEADER_TYPE)
        if frame.method == FrameType.CONTROL.value and kind == MessageType.PING.value:
            pong = json.dumps(self.client_config).encode()
            connection.outbox.put_nowait(
                self._frame(FrameType.CONTROL, {HEADER_TYPE: MessageType.PONG.value}, pong)
            )
        elif frame.method == FrameType.DATA.value and kind == MessageType.EVENT.value:
            self._answered(headers, bytes(frame.payload))
        else:
            self.errors.append(f"an unexpected frame: method {frame.method}, headers {headers}")

    def _answered(self, headers: dict[str, str], payload: bytes) -> None:
        message_id = headers.get(HEADER_MESSAGE_ID, "")
        waiting = self._waiting.get(message_id)
        if waiting is None or waiting.done():
            self.errors.append(f"an answer to no pending event: {message_id!r}")
            return
        answer = json.loads(payload)
        if answer.get("code") == 200 and HEADER_BIZ_RT not in headers:
            self.errors.append(f"an answer without {HEADER_BIZ_RT}: {message_id}")
        encoded = answer.get("data")
        data = json.loads(base64.b64decode(encoded)) if encoded else None
        reply = Reply(int(answer["code"]), data, headers)
        self.replies[message_id] = reply
        waiting.set_result(reply)

    def _frame(self, method: FrameType, headers: dict[str, str], payload: bytes) -> bytes:
        frame: Any = Frame()
        frame.SeqID = frame.LogID = next(self._ids)
        frame.service = SERVICE_ID
        frame.method = method.value
        for key, value in headers.items():
            header = frame.headers.add()
            header.key, header.value = key, value
        frame.payload = payload
        self.frames.append(Recorded("out", method.value, headers, payload))
        return bytes(frame.SerializeToString())


def _refuse(status: int, msg: str, auth_code: int | None = None) -> web.Response:
    """A refused handshake, with the headers the SDK reads its reason from."""
    headers = {HEADER_HANDSHAKE_STATUS: str(status), HEADER_HANDSHAKE_MSG: msg}
    if auth_code is not None:
        headers[HEADER_HANDSHAKE_AUTH_ERRCODE] = str(auth_code)
    return web.Response(status=403, headers=headers)
