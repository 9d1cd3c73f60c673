"""Telegram delivery: one `sendMessage` per outbox row, errors mapped to outcomes.

Calls the Bot API directly with httpx (PTB's Bot would rebuild objects from our ready-made
payload for nothing). Pacing constants are Telegram's published flood limits.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

import httpx

from bot.core.delivery import Blocked, Gone, Moved, Outcome, Rejected, RetryAfter, Sent, Transient
from bot.settings import Platform

TELEGRAM_PER_CHAT_INTERVAL = 1.0  # ≤ 1 message per second per chat
TELEGRAM_PER_GROUP_INTERVAL = 3.0  # ≤ 20 messages per minute per group
TELEGRAM_MAX_PER_SECOND = 28.0  # ≤ 30 per second overall, with a little headroom
SEND_TIMEOUT = httpx.Timeout(15.0, connect=5.0)
_TAG = re.compile(r"<[^>]*>")


def html_to_plain(text: str) -> str:
    """Our own HTML (escaped report text in a few tags) back to plain text."""
    return html.unescape(_TAG.sub("", text))


class TelegramSender:
    platform = Platform.TELEGRAM
    max_per_second = TELEGRAM_MAX_PER_SECOND

    def __init__(self, token: str, api_url: str) -> None:
        self.base = f"{api_url.rstrip('/')}/bot{token}"
        self.client = httpx.AsyncClient(timeout=SEND_TIMEOUT)

    def interval_for(self, target: str) -> float:
        return TELEGRAM_PER_GROUP_INTERVAL if target.startswith("-") else TELEGRAM_PER_CHAT_INTERVAL

    async def send(self, target: str, payload: Mapping[str, object]) -> Outcome:
        args: dict[str, Any] = {"chat_id": target, **payload}
        outcome = await self._call("sendMessage", args)
        if isinstance(outcome, Rejected) and "can't parse entities" in outcome.reason:
            # One plain-text retry; if that fails too the row is failed and reported.
            plain = {k: v for k, v in args.items() if k != "parse_mode"}
            plain["text"] = html_to_plain(str(args.get("text", "")))
            retried = await self._call("sendMessage", plain)
            return retried if isinstance(retried, Sent) else outcome
        return outcome

    async def _call(self, method: str, args: dict[str, Any]) -> Outcome:
        try:
            response = await self.client.post(f"{self.base}/{method}", json=args)
        except httpx.HTTPError as exc:
            return Transient(type(exc).__name__)
        try:
            body = response.json()
        except ValueError:
            return Transient(f"HTTP {response.status_code} without JSON")
        if body.get("ok"):
            result = body.get("result") or {}
            return Sent(str(result.get("message_id")) if isinstance(result, dict) else None)
        return _error(response.status_code, body)

    async def close(self) -> None:
        await self.client.aclose()


def _error(status: int, body: dict[str, Any]) -> Outcome:
    description = str(body.get("description", f"HTTP {status}"))
    parameters = body.get("parameters") or {}
    if status == 429:
        return RetryAfter(float(parameters.get("retry_after", 5)), description)
    if "migrate_to_chat_id" in parameters:
        return Moved(str(parameters["migrate_to_chat_id"]))
    if status == 403:
        return Blocked(description)
    if status == 400 and "chat not found" in description.lower():
        return Gone(description)
    if status >= 500 or status == 401:
        return Transient(description)
    return Rejected(description)
