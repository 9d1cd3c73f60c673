"""A strict loopback fake of the Telegram Bot API, for tests (aiohttp, 127.0.0.1, port 0).

    async with FakeTelegram() as fake:
        fake.add_chat(42)
        bot = telegram.Bot(fake.token, base_url=f"{fake.url}/bot")
        await bot.send_message(42, "<b>hi</b>", parse_mode="HTML")
        assert fake.sent[0].plain_text == "hi"

Every call is checked against the Bot API spec (`tests/specs/telegram/bot-api.json`): an unknown
method is 404, a missing required field or a value of the wrong type is 400, an unknown field is
recorded in `fake.unknown_fields` (the real API ignores it). Messages are checked like the real
API does (strict HTML, 4096 UTF-16 units, inline keyboards), sends are held to the flood limits,
and failures can be scripted per chat (`fake.script(chat_id, Fault.blocked())`).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Self

from aiohttp import web

from tests.fakes.loopback import serve
from tests.fakes.telegram.faults import Fault, FaultScript, FloodEvent, FloodGate, FloodLimits
from tests.fakes.telegram.keyboards import press_update
from tests.fakes.telegram.methods import HANDLERS, counts_towards_flood, too_many_requests
from tests.fakes.telegram.requests import read_params
from tests.fakes.telegram.spec import (
    DEFAULT_SPEC_PATH,
    BotApiError,
    MethodSpec,
    decode_params,
    load_spec,
)
from tests.fakes.telegram.state import (
    BotState,
    ChatType,
    FakeChat,
    MemberStatus,
    RecordedCall,
    SentMessage,
)
from tests.fakes.telegram.updates import callback_query_update, message_update

__all__ = ["FakeTelegram", "Fault", "FloodLimits", "RecordedCall", "SentMessage"]


class FakeTelegram:
    def __init__(
        self,
        token: str = "123456:TEST-token",
        spec_path: Path | None = None,
        *,
        flood: FloodLimits | None = None,
        bot_username: str = "prdigest_test_bot",
        clock: Callable[[], float] = time.monotonic,
        max_poll_seconds: float = 1.0,
    ) -> None:
        self.token = token
        self.spec = load_spec(spec_path or DEFAULT_SPEC_PATH)
        self.flood = flood or FloodLimits()
        self.clock = clock
        self._gate = FloodGate(self.flood, clock)
        self.state = BotState(self.spec, token, bot_username, self._gate)
        self.state.max_poll_seconds = max_poll_seconds
        self.requests: list[RecordedCall] = []
        self.unknown_fields: list[tuple[str, str]] = []  # (method, field path)
        self._faults = FaultScript()
        self._runner: web.AppRunner | None = None
        self.url = ""

    # What tests read ----------------------------------------------------------------------

    @property
    def sent(self) -> list[SentMessage]:
        return self.state.sent

    @property
    def chats(self) -> dict[int, FakeChat]:
        return self.state.chats

    @property
    def bot_id(self) -> int:
        return self.state.bot_id

    @property
    def violations(self) -> list[FloodEvent]:
        """Sends over a flood limit (answered 429 when `flood.enforce`)."""
        return self._gate.violations

    @property
    def early_retries(self) -> list[FloodEvent]:
        """Sends to a chat before the retry_after the fake announced for it had passed."""
        return self._gate.early_retries

    @property
    def count_429(self) -> Counter[int]:
        """Flood-limit 429s answered, per chat id."""
        return self._gate.count_429

    @property
    def flood_429s(self) -> int:
        return sum(self._gate.count_429.values())

    @property
    def poll_in_flight(self) -> bool:
        """Whether a getUpdates long poll is waiting right now."""
        return self.state.active_poll is not None

    def calls(self, method: str) -> list[RecordedCall]:
        return [call for call in self.requests if call.method.lower() == method.lower()]

    def sent_to(self, chat_id: int) -> list[SentMessage]:
        return [message for message in self.sent if message.chat_id == chat_id]

    # What tests arrange -------------------------------------------------------------------

    def add_chat(
        self,
        chat_id: int,
        type: ChatType = "private",
        title: str | None = None,
        username: str | None = None,
        is_forum: bool = False,
    ) -> FakeChat:
        return self.state.add_chat(chat_id, type, title, username, is_forum)

    def set_member(self, chat_id: int, user_id: int, status: MemberStatus = "member") -> None:
        self.state.set_member(chat_id, user_id, status)

    def push_update(self, update: dict[str, object]) -> int:
        """Queue an Update for getUpdates; assigns `update_id` when absent and returns it."""
        return self.state.push_update(update)

    def push_message(self, chat_id: int, text: str, *, user_id: int | None = None) -> int:
        """Queue a text message from a user (a /command gets its bot_command entity)."""
        return self.push_update(message_update(self.state, chat_id, text, user_id))

    def push_callback_query(self, chat_id: int, message_id: int, data: str, user_id: int) -> int:
        """Queue a press on an inline button of a message the bot sent."""
        return self.push_update(
            callback_query_update(self.state, chat_id, message_id, data, user_id)
        )

    def press(self, chat_id: int, message_id: int, callback_data: str, *, user: int) -> str:
        """`user` presses the button carrying `callback_data` that the message shows now;
        queues the callback_query update and returns its id (for answerCallbackQuery)."""
        update = press_update(self.state, chat_id, message_id, callback_data, user)
        self.push_update(update)
        query = update["callback_query"]
        assert isinstance(query, dict)
        return str(query["id"])

    @property
    def answered_callbacks(self) -> list[dict[str, object]]:
        """The accepted answerCallbackQuery params, in order."""
        return self.state.answered_callbacks

    def script(self, chat_id: int, *faults: Fault) -> None:
        """Answer the next calls naming `chat_id` with these faults, one per call, in order."""
        if chat_id not in self.chats:
            self.add_chat(chat_id, "private" if chat_id > 0 else "group")
        for fault in faults:
            new_chat_id = (fault.parameters or {}).get("migrate_to_chat_id")
            if isinstance(new_chat_id, int) and new_chat_id not in self.chats:
                self.add_chat(new_chat_id, "supergroup", self.chats[chat_id].title)
        self._faults.add(chat_id, faults)

    # Lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_route("*", "/{tail:.*}", self._not_found)
        self._runner, port = await serve(app, shutdown_timeout=0.5)
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self.state.active_poll is not None:
            self.state.active_poll.end("Conflict: the fake is shutting down")
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    # Serving ------------------------------------------------------------------------------

    async def _not_found(self, request: web.Request) -> web.Response:
        return web.json_response(BotApiError(404, "Not Found").payload(), status=404)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        started = self.clock()
        method = request.match_info["method"]
        params: dict[str, object] = {}
        fault: Fault | None = None
        try:
            method, params, fault = await self._prepare(request, method, params)
            result = await self._dispatch(method, params)
            payload: dict[str, object] = {"ok": True, "result": result}
            status = 200
        except BotApiError as error:
            payload, status = error.payload(), error.status
        self.requests.append(RecordedCall(method, params, started, status, payload))
        if fault is not None and fault.action == "reset_after_accept" and request.transport:
            request.transport.abort()  # accepted, but the client never hears about it
            return web.Response()
        if fault is not None and fault.action == "stall":
            await asyncio.sleep(fault.stall_seconds)
        return web.json_response(payload, status=status)

    async def _prepare(
        self, request: web.Request, method: str, params: dict[str, object]
    ) -> tuple[str, dict[str, object], Fault | None]:
        """Authenticate, find the method, decode and check the params, apply a scripted fault.

        `params` is filled in place so that a refused call is still recorded with what it sent.
        """
        if request.match_info["token"] != self.token:
            raise BotApiError(401, "Unauthorized")
        method_spec = self.spec.method(method)
        if method_spec is None:
            raise BotApiError(404, "Not Found")
        params.update(await read_params(request))
        params.update(self._decode(method_spec, params))
        fault = self._next_fault(params)
        if fault is not None and fault.is_error:
            raise BotApiError(fault.status, fault.description, fault.parameters)
        return method_spec.name, params, fault

    def _decode(self, method: MethodSpec, raw: dict[str, object]) -> dict[str, object]:
        params, unknown = decode_params(self.spec, method, raw)
        self.unknown_fields.extend((method.name, path) for path in unknown)
        return params

    def _next_fault(self, params: dict[str, object]) -> Fault | None:
        if "chat_id" not in params:
            return None
        try:
            chat_id = self.state.chat(params["chat_id"]).id
        except BotApiError:
            return None
        fault = self._faults.next_for(chat_id)
        retry_after = (fault.parameters or {}).get("retry_after") if fault else None
        if isinstance(retry_after, int):
            self._gate.announce_retry_after(chat_id, retry_after, enforced=False)
        return fault

    async def _dispatch(self, method: str, params: dict[str, object]) -> object:
        handler = HANDLERS.get(method)
        if handler is not None:
            return await handler(self.state, params)
        if counts_towards_flood(method) and "chat_id" in params:
            chat = self.state.chat(params["chat_id"])
            refused = self._gate.admit(chat.id)
            if refused is not None:
                raise too_many_requests(refused.retry_after)
        return True
