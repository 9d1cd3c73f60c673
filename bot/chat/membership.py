"""The bot's own membership in a chat: its destination follows the bot in and out.

Removed (left, kicked, blocked) turns the chat's destination off; back (re-added, unblocked,
`/start`, a new message in a channel that was archived) resumes it only when the bot's absence
stopped it (`store/resume.py`'s allow-list); a group that moved to a new id keeps its
destination. Every platform reports these the same way.
"""

from __future__ import annotations

import logging

from bot.core.logs import log
from bot.core.models import Platform
from bot.core.store.resume import REMOVED_FROM_CHAT, resume_if_bot_back
from bot.core.store.subscriptions.destination_store import DestinationStore

logger = logging.getLogger("prdigest.destinations")


class Membership:
    def __init__(self, destinations: DestinationStore) -> None:
        self.destinations = destinations

    async def removed(self, platform: Platform, chat_id: str, status: str) -> bool:
        """The bot left, was kicked, or (private chat) was blocked: stop sending there."""
        dest = await self.destinations.find(platform, chat_id)
        if dest is None or not dest.active:
            return False
        reason = f"{REMOVED_FROM_CHAT} ({status})"
        await self.destinations.set_active(dest.id, False, reason)
        log(
            logger,
            "destination.deactivated",
            logging.WARNING,
            destination=dest.label,
            reason=reason,
        )
        return True

    async def returned(self, platform: Platform, chat_id: str) -> bool:
        """The bot is back: resume a destination that stopped because the bot was gone, not
        one the chat stopped itself."""
        return await resume_if_bot_back(self.destinations, platform, chat_id) is not None

    async def migrated(self, platform: Platform, old_id: str, new_id: str) -> bool:
        """A chat got a new id (a Telegram group became a supergroup): its destination moves."""
        dest = await self.destinations.find(platform, old_id)
        if dest is None or await self.destinations.find(platform, new_id) is not None:
            return False
        await self.destinations.move(dest.id, new_id)
        log(logger, "destination.moved", destination=dest.label, new_target=new_id)
        return True
