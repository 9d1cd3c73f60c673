"""Long polling by one replica only: the poller holds a database lease.

Telegram serves `getUpdates` to one consumer per token. A second replica that also polled
would fight the first (409 Conflict) and steal its updates, so it does not start polling: it
logs who holds the lease and why, and takes over only if that holder dies (its lease expires).
Several replicas should use webhook mode instead, which all of them can serve.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from datetime import timedelta

from bot.chat.service import ChatService, LeaseError
from bot.logs import log

logger = logging.getLogger("prdigest.telegram")

POLL_LEASE = "telegram-polling"
POLL_LEASE_TTL = timedelta(seconds=30)
POLL_LEASE_RENEW_SECONDS = 10.0
REFUSED_REASON = (
    "another replica is long-polling this bot; only one may. For several replicas set "
    "telegram.webhook_url (and TELEGRAM_WEBHOOK_SECRET): every replica serves the webhook"
)


class PollingLeader:
    """Polls while it holds the lease; renews it; stands by while another replica holds it."""

    def __init__(
        self,
        chat: ChatService,
        start_polling: Callable[[], Awaitable[object]],
        stop_polling: Callable[[], Awaitable[object]],
        is_polling: Callable[[], bool],
    ) -> None:
        self.chat = chat
        self.start_polling = start_polling
        self.stop_polling = stop_polling
        self.is_polling = is_polling
        self.holder = f"{socket.gethostname()}:{os.getpid()}"
        self._refused_by: str | None = None

    async def step(self) -> None:
        held = await self.chat.hold_lease(POLL_LEASE, self.holder, POLL_LEASE_TTL)
        if held is None:
            self._refused_by = None
            if not self.is_polling():
                await self.start_polling()
                log(logger, "telegram.polling_started", holder=self.holder)
            return
        if self.is_polling():
            await self.stop_polling()
            log(logger, "telegram.polling_lost", logging.WARNING, holder=held.holder)
        if self._refused_by != held.holder:
            self._refused_by = held.holder
            log(
                logger,
                "telegram.polling_refused",
                logging.ERROR,
                reason=REFUSED_REASON,
                holder=held.holder,
                until=held.expires_at.isoformat(),
            )

    async def run(self) -> None:
        while True:
            await asyncio.sleep(POLL_LEASE_RENEW_SECONDS)
            try:
                await self.step()
            except LeaseError as exc:
                log(logger, "telegram.polling_lease_error", logging.WARNING, error=str(exc)[:300])

    async def release(self) -> None:
        await self.chat.release_lease(POLL_LEASE, self.holder)
