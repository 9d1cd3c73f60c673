"""A strict loopback fake of the Slack Web API and of response_url, for tests.

Point `AsyncWebClient(token=..., base_url=fake.api_url)` at it, put `fake.response_url()` in a
slash command payload, and it answers like Slack: it refuses unknown methods and parameters (from
Slack's OpenAPI spec), Block Kit over the limits, and, stricter than Slack, any live mention or
non-http(s) link the bot must never send. Every call is recorded; failures are scripted:

    async with FakeSlack() as fake:
        fake.script("chat.postMessage", Fault.rate_limited(retry_after="7"), channel="C0TEST1")
        client = AsyncWebClient(token=fake.bot_token, base_url=fake.api_url)
        ...
        assert [m.text for m in fake.posted] == [...]
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy

from tests.fakes.loopback import serve
from tests.fakes.slack.faults import Fault, FaultKind, FaultScript
from tests.fakes.slack.interactions import Interactions
from tests.fakes.slack.records import (
    FakeChannel,
    PostedMessage,
    RecordedCall,
    ResponseUrl,
    Violation,
)
from tests.fakes.slack.requests import (
    channel_of,
    drop_connection,
    fault_response,
    read_json_object,
    read_params,
    refusal_response,
)
from tests.fakes.slack.response_url import post_response, use_response_url
from tests.fakes.slack.spec import SPEC_PATH, SlackRefusal, load_operations
from tests.fakes.slack.views import FakeView, Views
from tests.fakes.slack.workspace import Workspace

MIN_POST_INTERVAL = 1.0  # chat.postMessage: about one message per second per channel
FAKE_JSON_UNSUPPORTED = "fake_json_unsupported"

__all__ = [
    "FakeChannel",
    "FakeSlack",
    "FakeView",
    "Fault",
    "PostedMessage",
    "RecordedCall",
    "Violation",
]


class FakeSlack:
    """The fake server; the workspace state (`users`, `channels`, `posted`...) is public."""

    def __init__(
        self,
        spec_path: Path | None = None,
        bot_token: str = "xoxb-test-token",
        *,
        enforce_rate: bool = False,
        rate_burst: int = 3,
        clock: Callable[[], float] = time.monotonic,
        team_id: str = "T0TEST",
        bot_user_id: str = "U0BOT",
        bot_id: str = "B0BOT",
    ) -> None:
        self.bot_token = bot_token
        self.token_revoked = False
        self.enforce_rate, self.rate_burst = enforce_rate, rate_burst
        self._clock = clock
        self._operations = load_operations(spec_path or SPEC_PATH)
        self.workspace = Workspace(clock, team_id, bot_user_id, bot_id)
        self.views = Views(clock, team_id, bot_id, self.workspace.users.__contains__)
        self.view_calls = self.views.calls  # accepted views.* calls, in order
        self._handlers = {**self.workspace.handlers(), **self.views.handlers()}
        self.interactions = Interactions(self)
        self.users = self.workspace.users
        self.channels = self.workspace.channels  # id → FakeChannel; `"C1" in fake.channels`
        self.posted = self.workspace.posted
        self.updates = self.workspace.updates  # chat.update results, in order
        self.messages = self.workspace.messages  # (channel, ts) → what the channel shows now
        self.allowed_mentions = self.workspace.allowed_mentions
        self.requests: list[RecordedCall] = []
        self.violations: list[Violation] = []
        self.rate_violations: Counter[str] = Counter()  # channel → posts < 1 s after the last
        self._faults = FaultScript()
        self._last_post: dict[str, float] = {}
        self._post_tokens: dict[str, tuple[float, float]] = {}  # channel → (tokens, at)
        self._response_urls: dict[str, ResponseUrl] = {}
        self._runner: web.AppRunner | None = None
        self._port: int | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_route("*", "/api/{method}", self._handle_api)
        app.router.add_post("/response/{key}", self._handle_response_url)
        # A short shutdown timeout: a call stalled by Fault.delay must not hold up stop().
        self._runner, self._port = await serve(app, shutdown_timeout=0.2)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeSlack:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def base_url(self) -> str:
        if self._port is None:
            raise RuntimeError("FakeSlack is not started")
        return f"http://127.0.0.1:{self._port}"

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/api/"

    # -- test controls -------------------------------------------------------------------------

    def response_url(
        self, key: str = "R0TEST", channel: str = "C0TEST1", user: str = "U0TEST1"
    ) -> str:
        """A response_url for a slash command run by `user` in `channel` (5 uses, 30 minutes)."""
        if key not in self._response_urls:
            self._response_urls[key] = ResponseUrl(key, channel, user, self._clock())
        return f"{self.base_url}/response/{key}"

    def script(self, method: str, *faults: Fault, channel: str | None = None) -> None:
        """Queue faults for `method` ("response_url" for response_url posts), one per call."""
        self._faults.add(method, faults, channel)

    def pending_faults(self) -> int:
        return self._faults.pending()

    def add_user(
        self, user_id: str, is_admin: bool = False, is_owner: bool = False, **fields: Any
    ) -> dict[str, Any]:
        return self.workspace.add_user(user_id, is_admin, is_owner, **fields)

    def add_channel(
        self, channel_id: str, archived: bool = False, bot_member: bool = True, name: str = ""
    ) -> FakeChannel:
        return self.workspace.add_channel(channel_id, archived, bot_member, name)

    def revoke_token(self) -> None:
        """From now on every authenticated call answers `token_revoked`."""
        self.token_revoked = True

    def calls(self, method: str) -> list[RecordedCall]:
        return [call for call in self.requests if call.method == method]

    def messages_in(self, channel: str) -> list[PostedMessage]:
        return [message for message in self.posted if message.channel == channel]

    def issue_trigger_id(self, user: str = "U0TEST1") -> str:
        """A trigger_id views.open takes once, within 3 s (payload helpers issue their own)."""
        return self.views.issue_trigger_id(user)

    def views_for(self, user: str) -> list[FakeView]:
        """The Home tab and open modals `user` sees now (`.current` is the latest view JSON)."""
        return self.views.views_for(user)

    # -- handlers ------------------------------------------------------------------------------

    def _record(self, method: str, params: dict[str, Any], request: web.Request) -> RecordedCall:
        headers = CIMultiDictProxy(CIMultiDict(request.headers))
        call = RecordedCall(method, params, headers, self._clock(), request.method, request.path)
        self.requests.append(call)
        return call

    def _note_findings(self, method: str, refusal: SlackRefusal) -> None:
        for finding in refusal.findings:
            violation = Violation(
                method, finding.error, finding.token, finding.pointer, finding.reason, self._clock()
            )
            self.violations.append(violation)

    async def _take_fault(self, method: str, params: dict[str, Any]) -> Fault | None:
        fault = self._faults.take(method, channel_of(params))
        if fault is not None and fault.kind is FaultKind.DELAY:
            await asyncio.sleep(fault.seconds)
            return None
        return fault

    async def _handle_api(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        params, body_kind, problem = await read_params(request)
        call = self._record(method, params, request)
        fault = await self._take_fault(method, params)
        if fault is not None and fault.kind is not FaultKind.RESET_AFTER_ACCEPT:
            return fault_response(call, fault)
        try:
            if problem is not None:
                raise problem
            result = self._call_method(method, params, body_kind, request)
        except SlackRefusal as refusal:
            self._note_findings(method, refusal)
            return refusal_response(call, refusal)
        call.response = result
        if fault is not None:
            return drop_connection(request)
        call.status = 200
        return web.json_response(result)

    def _call_method(
        self, method: str, params: dict[str, Any], body_kind: str, request: web.Request
    ) -> dict[str, Any]:
        operation = self._operations.get(method)
        if operation is None:
            raise SlackRefusal("unknown_method")
        if operation.needs_token:
            self._authenticate(params, body_kind, request)
        if body_kind == "json" and not operation.accepts_json:
            # Real Slack silently ignores a JSON body here, so the call would miss its arguments.
            raise SlackRefusal(FAKE_JSON_UNSUPPORTED, f"[ERROR] {method} takes no JSON body")
        operation.check_arguments(params)
        if method == "chat.postMessage":
            self._pace(str(params["channel"]))
        handler = self._handlers.get(method)
        return handler(params) if handler else {"ok": True}

    def _authenticate(self, params: dict[str, Any], body_kind: str, request: web.Request) -> None:
        """The Authorization header, or a form field; Slack ignores tokens in JSON or the query."""
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            token = str(params.get("token", "")) if body_kind == "form" else ""
        if not token:
            raise SlackRefusal("not_authed")
        if token != self.bot_token:
            raise SlackRefusal("invalid_auth")
        if self.token_revoked:
            raise SlackRefusal("token_revoked")

    def _pace(self, channel: str) -> None:
        """Count posts less than 1 s apart; when enforcing, refuse past a small burst."""
        now = self._clock()
        last = self._last_post.get(channel)
        if last is not None and now - last < MIN_POST_INTERVAL:
            self.rate_violations[channel] += 1
        self._last_post[channel] = now
        if not self.enforce_rate:
            return
        tokens, at = self._post_tokens.get(channel, (float(self.rate_burst), now))
        tokens = min(float(self.rate_burst), tokens + (now - at) / MIN_POST_INTERVAL)
        if tokens < 1:
            self._post_tokens[channel] = (tokens, now)
            raise SlackRefusal("ratelimited", status=429, headers={"Retry-After": "1"})
        self._post_tokens[channel] = (tokens - 1, now)

    async def _handle_response_url(self, request: web.Request) -> web.StreamResponse:
        key = request.match_info["key"]
        body, problem = await read_json_object(request)
        call = self._record("response_url", body, request)
        url = self._response_urls.get(key)
        fault = await self._take_fault("response_url", {"channel": url.channel} if url else {})
        if fault is not None and fault.kind is not FaultKind.RESET_AFTER_ACCEPT:
            return fault_response(call, fault)
        try:
            live_url = use_response_url(url, self._clock())
            if problem is not None:
                raise problem
            message = post_response(self.workspace, live_url, body)
        except SlackRefusal as refusal:
            self._note_findings("response_url", refusal)
            if refusal.status == 200:
                refusal.status = 400  # response_url answers content errors with HTTP 400
            return refusal_response(call, refusal, plain=True)
        call.response = {"ok": True, "ts": message.ts}
        if fault is not None:
            return drop_connection(request)
        call.status = 200
        return web.Response(text="ok")
