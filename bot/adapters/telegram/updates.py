"""How updates get in: the webhook endpoint, what is taken on, and the order of handling.

`POST /telegram/webhook` checks `X-Telegram-Bot-Api-Secret-Token` in constant time (403, and
nothing processed, when it is missing or wrong), hands the update to the platform's bounded
work queue (`bot/adapters/work.py`) and answers 200 at once; handling happens behind the
answer, repeats are dropped by `update_id` in the handlers. An update the queue does not take
(full, or its user over their rate) is never handled: a message or a button press is told
"busy, try again in a minute" in the webhook's own answer (a Bot API call Telegram makes for
us, no request of ours), once a minute per user at most; any other update (the bot's
membership) is answered 503, and Telegram delivers it again later. Long polling hands its
updates to the same queue (`ChatOrderedProcessor.process_update`); there the busy notice is
a message of its own.

Updates of different chats are handled concurrently (a long `/pr 7422 full` in one chat does
not hold up the others), updates of one chat one after another, in the order they came.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from telegram import Update
from telegram.ext import Application, BaseUpdateProcessor

from bot.adapters.http_body import BodyTooLargeError, read_capped
from bot.adapters.work import Admission, WorkQueue
from bot.logs import log

logger = logging.getLogger("prdigest.telegram")

WEBHOOK_PATH = "/telegram/webhook"
SECRET_HEADER = "x-telegram-bot-api-secret-token"  # noqa: S105 - a header name
MAX_UPDATE_BYTES = 1024 * 1024  # an Update is a few KB; Telegram never sends more than this
MAX_CONCURRENT_UPDATES = 64

NOT_CONNECTED_RETRY_SECONDS = 30  # Retry-After while Telegram has not been reached yet

# PTB's Application is generic in six types (bot, context, user/chat/bot data, job queue).
TelegramApp = Application[Any, Any, Any, Any, Any, Any]
# What a refused update gets: the webhook's answer (None: 200, empty) / a busy message.
WebhookBusy = Callable[[Update], dict[str, Any] | None]
PollingBusy = Callable[[Update], None]


def _ignore(update: Update) -> None:
    """Until the adapter says how to tell a polling user that the bot is busy."""


def asker(update: object) -> str:
    """Whose rate an update counts against: its user's, else its chat's."""
    if not isinstance(update, Update):
        return ""
    if update.effective_user is not None:
        return str(update.effective_user.id)
    chat = update.effective_chat
    return f"chat:{chat.id}" if chat is not None else ""


class ChatOrderedProcessor(BaseUpdateProcessor):
    """Concurrent across chats, sequential within one chat; updates first pass the work
    queue (`admit`), which may refuse them."""

    def __init__(
        self, work: WorkQueue | None = None, max_concurrent_updates: int = MAX_CONCURRENT_UPDATES
    ) -> None:
        super().__init__(max_concurrent_updates)
        self.work = work or WorkQueue("telegram")
        self.on_refused: PollingBusy = _ignore
        self._locks: dict[int, asyncio.Lock] = {}
        self._users: Counter[int] = Counter()

    def admit(self, update: object, handling: Awaitable[Any]) -> bool:
        """Queue `handling` (PTB's handlers for `update`); False, and it never runs, when the
        work queue does not take it. One taken and then pushed out of the queue by a
        newcomer's (see work.py) is told busy as a polled one is (`on_refused`)."""
        job = partial(self._in_chat_order, update, handling)
        close = getattr(handling, "close", _nothing)
        chat = update.effective_chat if isinstance(update, Update) else None
        where = str(chat.id) if chat is not None else ""
        bumped = partial(self._bumped, update)
        admission = self.work.submit(asker(update), job, close, where, bumped)
        return admission is Admission.TAKEN

    def _bumped(self, update: object) -> None:
        if isinstance(update, Update):
            self.on_refused(update)

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """What PTB's update fetcher calls for each update (long polling): it is queued, and
        this returns at once; the workers bound how many run."""
        if not self.admit(update, coroutine) and isinstance(update, Update):
            self.on_refused(update)

    async def _in_chat_order(self, update: object, coroutine: Awaitable[Any]) -> None:
        chat = update.effective_chat if isinstance(update, Update) else None
        if chat is None:
            await coroutine
            return
        lock = self._locks.setdefault(chat.id, asyncio.Lock())
        self._users[chat.id] += 1
        try:
            async with lock:
                await coroutine
        finally:
            self._users[chat.id] -= 1
            if self._users[chat.id] <= 0:
                del self._users[chat.id]
                del self._locks[chat.id]

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""


def secret_matches(request: Request, secret: str) -> bool:
    # Header values reach Starlette as latin-1; compare bytes so any value is comparable.
    given = request.headers.get(SECRET_HEADER, "").encode("latin-1")
    return hmac.compare_digest(given, secret.encode("utf-8"))


def _nothing() -> None:
    """An awaitable with nothing to close."""


def webhook_endpoint(
    app: TelegramApp, secret: str, busy: WebhookBusy
) -> Callable[[Request], Awaitable[Response]]:
    processor = app.update_processor
    assert isinstance(processor, ChatOrderedProcessor)

    async def receive_update(request: Request) -> Response:
        if not secret_matches(request, secret):
            log(logger, "telegram.webhook_refused", logging.WARNING, reason="bad secret token")
            return JSONResponse({"error": "missing or wrong secret token"}, status_code=403)
        try:
            data = json.loads(await read_capped(request, MAX_UPDATE_BYTES))
        except BodyTooLargeError:
            return JSONResponse({"error": "update too large"}, status_code=413)
        except ValueError:
            return JSONResponse({"error": "body is not JSON"}, status_code=400)
        if app.running and _refused_unread(processor.work, data):
            return Response(status_code=200)
        update = _read_update(data, app)
        if update is None:
            return Response(status_code=200)
        if not app.running:  # Telegram not reached yet: it delivers the update again later
            return _retry_later("not connected to Telegram yet")
        if processor.admit(update, app.process_update(update)):
            return Response(status_code=200)
        if update.effective_message is None and update.callback_query is None:
            return _retry_later("busy")  # not a command: worth handling later
        answer = busy(update)
        return Response(status_code=200) if answer is None else JSONResponse(answer)

    return receive_update


def _sender(data: dict[str, Any]) -> tuple[str, str] | None:
    """(whose rate, which chat) of a message or a button press, read from the update's JSON
    as `asker` and `admit` read them from the Update; None for any other update."""
    for kind in ("message", "callback_query"):
        item = data.get(kind)
        if not isinstance(item, dict):
            continue
        person = item.get("from")
        where = item.get("chat") if kind == "message" else item.get("message")
        if kind == "callback_query" and isinstance(where, dict):
            where = where.get("chat")
        if not (isinstance(person, dict) and isinstance(person.get("id"), int)):
            return None
        chat = where.get("id") if isinstance(where, dict) else None
        return str(person["id"]), str(chat) if isinstance(chat, int) else ""
    return None


def _refused_unread(work: WorkQueue, data: object) -> bool:
    """Whether a message or button press is refused (and counted) without being read into an
    Update, PTB's costliest step: its user is over their rate or the queue is full, and they
    heard "busy" within the minute, so the answer is an empty 200 anyway. Under a flood that
    is most updates. An update whose user is due a busy notice is read whole for it."""
    sender = _sender(data) if isinstance(data, dict) else None
    if sender is None:
        return False
    user, chat = sender
    if not work.told_busy_lately(user):
        return False
    return work.refusal(user, chat) is not None


def _retry_later(reason: str) -> Response:
    response = JSONResponse({"error": reason}, status_code=503)
    response.headers["Retry-After"] = str(NOT_CONNECTED_RETRY_SECONDS)
    return response


def _read_update(data: object, app: TelegramApp) -> Update | None:
    """The Update, or None (logged) for one we cannot read: answering an error would only
    make Telegram redeliver it for a day."""
    if not (isinstance(data, dict) and isinstance(data.get("update_id"), int)):
        log(logger, "telegram.update_unreadable", logging.WARNING, detail="not an Update")
        return None
    try:
        return Update.de_json(data, app.bot)
    except (KeyError, TypeError, ValueError) as exc:
        detail = f"{type(exc).__name__}: {exc}"[:300]
        log(logger, "telegram.update_unreadable", logging.WARNING, detail=detail)
        return None
