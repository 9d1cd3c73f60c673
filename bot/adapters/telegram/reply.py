"""Command replies: rendered messages sent straight to the chat, paced like digests.

Replies skip the outbox (a user waits for them, and a lost reply is asked again), but not the
flood limits: each message takes a slot from the sender's `ChatPacer`, and a 429 makes the
chat wait out `retry_after` before the next try.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any

from bot.adapters.telegram.sender import TelegramSender
from bot.core.delivery.port import Moved, Outcome, RetryAfter, Sent
from bot.core.render.renderer import RenderedMessage
from bot.logs import log

logger = logging.getLogger("prdigest.telegram")

REPLY_ATTEMPTS = 2  # a 429 gets one more try after its retry_after
MAX_REPLY_WAIT_SECONDS = 90.0  # longer than that, the user has given up on the answer


class Replier:
    def __init__(self, sender: TelegramSender) -> None:
        self.sender = sender
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        """Replies still waiting for their turn are dropped: the service is stopping."""
        self._stopping.set()

    async def _take_turn(self, chat_id: str) -> bool:
        """Wait until the chat may get a message and claim that slot; False when stopping
        or when the wait would pass MAX_REPLY_WAIT_SECONDS."""
        pacer = self.sender.pacer
        while (wait := pacer.wait_for(chat_id)) > 0:
            if wait > MAX_REPLY_WAIT_SECONDS or self._stopping.is_set():
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), wait)
        if self._stopping.is_set():
            return False
        pacer.record(chat_id)
        return True

    async def send(
        self, chat_id: str, messages: Sequence[RenderedMessage], reply_to: int | None = None
    ) -> int:
        """Send `messages` in order (the first as a reply to `reply_to`); how many arrived.
        Stops at the first one that cannot be sent: the rest would read out of context."""
        for index, message in enumerate(messages):
            payload: dict[str, Any] = dict(message.payload)
            if reply_to is not None and index == 0:
                payload["reply_parameters"] = {
                    "message_id": reply_to,
                    "allow_sending_without_reply": True,
                }
            if not await self._send_one(chat_id, payload):
                return index
        return len(messages)

    async def _send_one(self, chat_id: str, payload: dict[str, Any]) -> bool:
        return isinstance(await self.send_one(chat_id, payload), Sent)

    async def send_one(self, chat_id: str, payload: dict[str, Any]) -> Outcome | None:
        """One message, paced; what Telegram answered (Sent, or why not: Blocked when the
        user never started the bot, Gone for a chat Telegram does not know), None when it
        was dropped unsent (stopping, or the chat busy too long)."""
        outcome: Outcome | None = None
        for _ in range(REPLY_ATTEMPTS):
            if not await self._take_turn(chat_id):
                reason = "stopping" if self._stopping.is_set() else "chat busy too long"
                log(logger, "telegram.reply_dropped", logging.WARNING, chat=chat_id, reason=reason)
                return None
            outcome = await self.sender.deliver(chat_id, payload)
            if isinstance(outcome, Sent):
                return outcome
            if not isinstance(outcome, RetryAfter):
                reason = outcome.new_target if isinstance(outcome, Moved) else outcome.reason
                kind = type(outcome).__name__
                log(
                    logger,
                    "telegram.reply_failed",
                    logging.WARNING,
                    chat=chat_id,
                    outcome=kind,
                    reason=reason,
                )
                return outcome
            # The sender made the pacer hold this chat for retry_after: the next turn waits.
        log(logger, "telegram.reply_dropped", logging.WARNING, chat=chat_id, reason="rate limited")
        return outcome
