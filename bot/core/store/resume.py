"""The bot is back in a chat: resume the digests that stopped because it was gone.

One rule for every platform, an allow-list: a destination resumes only when the reason it was
turned off says the bot could not reach the chat (removed, blocked, the channel archived or not
found). Anything else stays off: an operator's decision is not undone by re-adding the bot.
"""

from __future__ import annotations

import logging

from bot.core.logs import log
from bot.core.models import Platform
from bot.core.store.subscriptions.destination_store import Destination, DestinationStore

logger = logging.getLogger("prdigest.destinations")

# What a Telegram adapter records when the bot leaves or is kicked (the status follows).
REMOVED_FROM_CHAT = "the bot was removed from the chat"
# How the reasons for "the bot could not reach the chat" begin: Slack's error codes, our own
# note above, and the Bot API's 403s ("Forbidden: bot was blocked by the user", "Forbidden: bot
# was kicked from the group chat") and its 400 for a chat it cannot see.
BOT_OUT_REASONS = (
    "not_in_channel",
    "is_archived",
    "channel_not_found",
    REMOVED_FROM_CHAT,
    "Forbidden:",
    "Bad Request: chat not found",
)


def bot_was_out(reason: str | None) -> bool:
    """Did the destination stop because the bot was out of its chat?"""
    return reason is not None and reason.startswith(BOT_OUT_REASONS)


async def resume_if_bot_back(
    destinations: DestinationStore, platform: Platform, target: str
) -> Destination | None:
    """Resume the chat's destination if the bot's absence stopped it; the destination
    resumed, or None when there was nothing to resume."""
    dest = await destinations.find(platform, target)
    if dest is None or dest.active or not bot_was_out(dest.deactivated_reason):
        return None
    await destinations.set_active(dest.id, True)
    log(logger, "destination.reactivated", destination=dest.label)
    return dest
