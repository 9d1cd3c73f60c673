"""How updates get in: the webhook endpoint, and the order they are handled in.

`POST /telegram/webhook` checks `X-Telegram-Bot-Api-Secret-Token` in constant time (403, and
nothing processed, when it is missing or wrong), queues the update and answers 200 at once;
handling happens behind the answer, repeats are dropped by `update_id` in the handlers.

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
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from telegram import Update
from telegram.ext import Application, BaseUpdateProcessor

from bot.logs import log
from bot.web import BodyTooLargeError, read_capped

logger = logging.getLogger("prdigest.telegram")

WEBHOOK_PATH = "/telegram/webhook"
SECRET_HEADER = "x-telegram-bot-api-secret-token"  # noqa: S105 - a header name
MAX_UPDATE_BYTES = 1024 * 1024  # an Update is a few KB; Telegram never sends more than this
MAX_CONCURRENT_UPDATES = 64

# PTB's Application is generic in six types (bot, context, user/chat/bot data, job queue).
TelegramApp = Application[Any, Any, Any, Any, Any, Any]


class ChatOrderedProcessor(BaseUpdateProcessor):
    """Concurrent across chats, sequential within one chat."""

    def __init__(self, max_concurrent_updates: int = MAX_CONCURRENT_UPDATES) -> None:
        super().__init__(max_concurrent_updates)
        self._locks: dict[int, asyncio.Lock] = {}
        self._users: Counter[int] = Counter()

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
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


def webhook_endpoint(app: TelegramApp, secret: str) -> Callable[[Request], Awaitable[Response]]:
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
        update = _read_update(data, app)
        if update is not None:
            await app.update_queue.put(update)
        return Response(status_code=200)

    return receive_update


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
