"""The Slack app: bolt's AsyncApp behind `POST /slack/events`, or over Socket Mode.

HTTP mode (the default, and what production should use: it load-balances across replicas)
mounts one route for events, slash commands and interactivity. The signature is checked here
first (see `verify.py`), so a forged or malformed request is a 401 before bolt parses it;
bolt checks it again. A signed body that is not a Slack payload is a 400 (`payload.py`). A
signature seen before (kept in the shared dedupe table, so every replica knows it) is a replay
of a captured request: it is acknowledged and not handled again. With `SLACK_APP_TOKEN` set
the app connects out over Socket Mode instead, for teams whose bot cannot be reached from the
internet, and serves no route.

Outbound digests do not pass through here: they go through the outbox and `sender.py`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from slack_bolt.adapter.starlette.async_handler import to_async_bolt_request, to_starlette_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_sdk.web.async_client import AsyncWebClient
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from bot.adapters.base import AdapterDeps
from bot.adapters.http_body import BodyTooLargeError, read_capped
from bot.adapters.slack.ack_gate import AckGate
from bot.adapters.slack.client import BotIdentity, interactive_client
from bot.adapters.slack.listeners import ONCE_KEYS, SLASH_COMMAND, SlackListeners
from bot.adapters.slack.payload import MalformedPayloadError, read_payload
from bot.adapters.slack.users import SlackUsers
from bot.adapters.slack.verify import SIGNATURE_HEADER, SlackSignature
from bot.adapters.work import WorkQueue
from bot.logs import log, observe
from bot.settings import ConfigError

logger = logging.getLogger("prdigest.slack")

EVENTS_PATH = "/slack/events"
MAX_SLACK_BODY_BYTES = 1024 * 1024  # Slack's payloads are a few KB; refuse floods early
SHUTDOWN_GRACE_SECONDS = 4.0  # answers running at SIGTERM may finish their sends (from SIGTERM on)
REPLAY_KEY_PREFIX = "slack-sig:"  # dedupe keys of signed requests already handled


class SocketHandler(Protocol):
    async def connect_async(self) -> None: ...

    async def close_async(self) -> None: ...


SocketHandlerFactory = Callable[[AsyncApp, str], SocketHandler]


def bolt_socket_handler(app: AsyncApp, app_token: str) -> SocketHandler:
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

    handler: SocketHandler = AsyncSocketModeHandler(app, app_token)
    return handler


class _NoActionNeeded(logging.Filter):
    """Drops bolt's "As you gave `client` as well, `token` will be unused": bolt reads
    SLACK_BOT_TOKEN from the environment itself, while every call goes through the client this
    adapter gives it. The line asks nothing of the person reading the log."""

    UNUSED_TOKEN = warning_client_prioritized_and_token_skipped()

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != self.UNUSED_TOKEN


def _bolt_logger() -> logging.Logger:
    logger = logging.getLogger("prdigest.slack.bolt")
    if not any(isinstance(f, _NoActionNeeded) for f in logger.filters):
        logger.addFilter(_NoActionNeeded())
    return logger


@dataclass(frozen=True)
class SlackSettings:
    bot_token: str
    api_url: str
    signing_secret: str | None = None
    app_token: str | None = None
    admins: tuple[str, ...] = ()

    @property
    def socket_mode(self) -> bool:
        return bool(self.app_token)


class SlackAdapter:
    name = "slack"

    def __init__(
        self,
        deps: AdapterDeps,
        settings: SlackSettings,
        socket_handler_factory: SocketHandlerFactory = bolt_socket_handler,
    ) -> None:
        if not settings.socket_mode and not settings.signing_secret:
            raise ConfigError(
                "Slack needs SLACK_SIGNING_SECRET (HTTP mode) or SLACK_APP_TOKEN (Socket Mode)"
            )
        self.settings = settings
        self.chat = deps.chat
        self.clock = deps.clock
        self.client = interactive_client(settings.bot_token, settings.api_url, deps.clock)
        self.identity = BotIdentity(self.client)
        self.app = AsyncApp(
            name="prdigest",
            # Token-less: bolt's per-request copies are not used; every call goes through
            # `self.client`, whose arguments stay within the Web API spec.
            client=AsyncWebClient(base_url=settings.api_url),
            authorize=self.identity.authorize_function(),
            signing_secret=settings.signing_secret or "",
            request_verification_enabled=not settings.socket_mode,
            # Listeners only ack and start a tracked task, so bolt may wait for them: no
            # untracked futures of bolt's own, and the ack still leaves at once.
            process_before_response=True,
            logger=_bolt_logger(),
        )
        self.users = SlackUsers(self.client, settings.admins)
        self.gate = AckGate()
        self.work = WorkQueue("slack", deps.work_limits)
        self.listeners = SlackListeners(deps, self.users, self.gate, self.work)
        self.listeners.register(self.app)
        self._signature = (
            None
            if settings.socket_mode
            else SlackSignature(settings.signing_secret or "", lambda: deps.clock().timestamp())
        )
        self._socket_handler_factory = socket_handler_factory
        self._socket: SocketHandler | None = None
        self._warm_up: asyncio.Task[object] | None = None

    @property
    def mode(self) -> str:
        return "socket" if self.settings.socket_mode else "http"

    def routes(self) -> list[BaseRoute]:
        if self._signature is None:
            return []
        return [Route(EVENTS_PATH, self.handle_events, methods=["POST"])]

    async def start(self) -> None:
        await self.chat.forget_old_events()
        # auth.test in the background: a bad token is logged at start, a slow Slack does not
        # hold up the service's start.
        self._warm_up = asyncio.create_task(self.identity.result())
        observe(self._warm_up, logger, "slack.warm_up_failed")
        if self.settings.app_token:
            self._socket = self._socket_handler_factory(self.app, self.settings.app_token)
            await self._socket.connect_async()
        log(logger, "slack.started", mode=self.mode, admins=len(self.settings.admins))

    def stop_taking_work(self) -> None:
        """On SIGTERM, before the web server winds down: no more answers are taken, the
        queued ones are dropped (one log line counts them); those running go on."""
        self.work.stop_taking()

    async def stop(self) -> None:
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None
        await self.work.stop(SHUTDOWN_GRACE_SECONDS)
        if self._warm_up is not None:
            self._warm_up.cancel()

    async def handle_events(self, request: Request) -> Response:
        """Events, slash commands and interactivity: verify, then hand to bolt. Answers the
        listeners start wait until no request is left to acknowledge (see `ack_gate.py`)."""
        with self.gate.acking():
            return await self._handle_events(request)

    async def _handle_events(self, request: Request) -> Response:
        assert self._signature is not None
        try:
            body = await read_capped(request, MAX_SLACK_BODY_BYTES)
        except BodyTooLargeError:
            return JSONResponse({"error": "request too large"}, status_code=413)
        if not self._signature.is_valid(request.headers, body):
            log(logger, "slack.bad_signature", logging.WARNING, path=request.url.path)
            return JSONResponse({"error": "invalid request signature"}, status_code=401)
        # Slack never sends a request twice with one signature (its retries are signed anew),
        # so a repeat inside the 5-minute window is a replay: the answer records the signature
        # before it runs, after the ack (listeners._once), and a replay is acknowledged only.
        signature = request.headers.get(SIGNATURE_HEADER, "")
        try:
            payload = read_payload(body, request.headers.get("content-type"))
            if self._refused_at_once(payload):
                return JSONResponse(self.listeners.busy_ack)
            context = {ONCE_KEYS: [f"{REPLAY_KEY_PREFIX}{signature}"]}
            bolt_request = to_async_bolt_request(request, body, context)
        except (MalformedPayloadError, ValueError) as exc:  # signed, but not Slack's shape
            log(logger, "slack.bad_payload", logging.WARNING, reason=str(exc)[:200])
            return JSONResponse({"error": f"malformed payload: {exc}"[:300]}, status_code=400)
        return to_starlette_response(await self.app.async_dispatch(bolt_request))

    def _refused_at_once(self, payload: dict[str, Any]) -> bool:
        """Whether this is a `/pr` the work queue refuses (counted as refused): it is answered
        "busy" here, as its listener would, without bolt's dispatch, which costs more than
        the rest of the request; under a flood most commands are refused."""
        user = payload.get("user_id")
        if payload.get("command") != SLASH_COMMAND or not isinstance(user, str):
            return False
        return self.work.refusal(user) is not None
