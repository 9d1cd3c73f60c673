"""Telegram delivery: one `sendMessage` per outbox row, errors mapped to outcomes.

Calls the Bot API directly with httpx (PTB's Bot would rebuild objects from our ready-made
payload for nothing). Its pacing follows `TelegramLimits` (Telegram's published flood limits,
see `pace.py`). Command replies (sent by the adapter, not the outbox) share the sender's
`ChatPacer`, so a reply and a digest message never reach one chat closer than the limits allow.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx

from bot.adapters.telegram.pace import ArrivalWindow, ChatPacer
from bot.adapters.telegram.topics import is_topic_gone, place_message, topic_answer
from bot.core.delivery.port import (
    Blocked,
    Gone,
    Moved,
    Outcome,
    Placement,
    Rejected,
    RetryAfter,
    Sent,
    TopicAnswer,
    Transient,
    Turn,
    Withheld,
)
from bot.core.models import Platform
from bot.core.render.telegram import html_to_plain

SEND_TIMEOUT = httpx.Timeout(15.0, connect=5.0)
DEFAULT_RETRY_AFTER = 5.0

Ready = Callable[[], Awaitable[Outcome | None]]
"""Awaited inside the arrival window right before the request leaves: None to send, or the
outcome to report instead."""


class TelegramSender:
    platform = Platform.TELEGRAM

    def __init__(
        self,
        token: str,
        api_url: str,
        pacer: ChatPacer | None = None,
    ) -> None:
        self.base = f"{api_url.rstrip('/')}/bot{token}"
        self.client = httpx.AsyncClient(timeout=SEND_TIMEOUT)
        self.pacer = pacer if pacer is not None else ChatPacer()
        # One account of the limits: the pacer's (Telegram's own unless a test shrinks them).
        limits = self.limits = self.pacer.limits
        self.max_per_second = limits.max_per_second
        # Digests and command replies alike: every message counts against the overall limit.
        self.arrivals = ArrivalWindow(limits.overall_limit, limits.overall_seconds)

    def interval_for(self, target: str) -> float:
        return self.limits.interval_for(target)

    async def warm_up(self) -> None:
        """`getMe` (no flood limit counts it): the connection is open before a burst."""
        with contextlib.suppress(httpx.HTTPError):
            await self.client.post(f"{self.base}/getMe")

    async def send(self, target: str, payload: Mapping[str, object], turn: Turn) -> Outcome:
        """An outbox row, once the arrival window lets it in and its turn comes; rescheduled
        (not sent) while the chat just got a command reply."""

        async def ready() -> Outcome | None:
            if not await turn():
                return Withheld()
            wait = self.pacer.wait_for(target)
            if wait > 0:
                return RetryAfter(wait, "paced: this chat just received a message")
            self.pacer.record(target)
            return None

        return await self.deliver(target, payload, ready)

    async def deliver(
        self, target: str, payload: Mapping[str, object], ready: Ready | None = None
    ) -> Outcome:
        """Send now (the caller took care of pacing), with one plain-text retry."""
        args: dict[str, Any] = {"chat_id": target, **payload}
        outcome = await self._call("sendMessage", args, ready)
        if isinstance(outcome, Rejected) and "can't parse entities" in outcome.reason:
            # One plain-text retry; if the platform refuses that too, the row is failed and
            # reported. A 429 or a network error on the retry keeps the row pending instead.
            plain = {k: v for k, v in args.items() if k != "parse_mode"}
            plain["text"] = html_to_plain(str(args.get("text", "")))
            retried = await self._call("sendMessage", plain)
            return outcome if isinstance(retried, Rejected) else retried
        return outcome

    async def _call(self, method: str, args: dict[str, Any], ready: Ready | None = None) -> Outcome:
        answer = await self._request(method, args, ready)
        if not isinstance(answer, dict):
            return answer
        return Sent(str(answer.get("message_id")) if answer else None)

    async def _request(
        self, method: str, args: dict[str, Any], ready: Ready | None = None
    ) -> dict[str, Any] | Outcome:
        """The call's `result` object (empty when it is not one), or the outcome it ended with."""
        try:
            async with self.arrivals.slot() as place:
                if ready is not None and (refused := await ready()) is not None:
                    place.unused()
                    return refused
                try:
                    response = await self.client.post(f"{self.base}/{method}", json=args)
                finally:
                    self.pacer.answered(str(args["chat_id"]))
        except httpx.HTTPError as exc:
            return Transient(type(exc).__name__)
        try:
            body = response.json()
        except ValueError:
            return Transient(f"HTTP {response.status_code} without JSON")
        if not isinstance(body, dict):
            return Transient(f"HTTP {response.status_code} without a JSON object")
        if body.get("ok"):
            result = body.get("result")
            return result if isinstance(result, dict) else {}
        outcome = _error(response.status_code, body)
        if isinstance(outcome, RetryAfter):
            self.pacer.hold(str(args.get("chat_id", "")), outcome.seconds)
        return outcome

    def placed(self, payload: Mapping[str, object], placement: Placement) -> dict[str, object]:
        """A reply under its parent (sent even if the parent was deleted since), or a message
        in a forum topic."""
        return place_message(payload, placement)

    async def open_topic(self, target: str, name: str) -> TopicAnswer:
        """`createForumTopic`; a chat without topics answers NotForum."""
        answer = await self._request("createForumTopic", {"chat_id": target, "name": name})
        return topic_answer(answer)

    def topic_gone(self, reason: str) -> bool:
        return is_topic_gone(reason)

    async def close(self) -> None:
        await self.client.aclose()


def _retry_after(parameters: dict[str, Any]) -> float:
    """`parameters.retry_after` in seconds; a missing or odd value gets the default wait."""
    value = parameters.get("retry_after")
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 10**7:
        return float(value)
    return DEFAULT_RETRY_AFTER


def _error(status: int, body: dict[str, Any]) -> Outcome:
    description = str(body.get("description", f"HTTP {status}"))
    parameters = body.get("parameters")
    if not isinstance(parameters, dict):
        parameters = {}
    if status == 429:
        return RetryAfter(_retry_after(parameters), description)
    if "migrate_to_chat_id" in parameters:
        return Moved(str(parameters["migrate_to_chat_id"]))
    if status == 403:
        return Blocked(description)
    if status == 400 and "chat not found" in description.lower():
        return Gone(description)
    if status >= 500 or status == 401:
        return Transient(description)
    return Rejected(description)
