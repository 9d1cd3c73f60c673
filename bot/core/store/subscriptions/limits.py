"""How many subscriptions chats may make: per destination, and per person across their DMs.

One user could otherwise make thousands in one DM (each `subscribe` is cheap), and every tick,
listing and Home tab would pay for them. The caps are checked inside the transaction that adds
the subscription, so two `subscribe`s racing in one chat cannot both pass the last place (they
also contend for the same next number there); across a person's DMs a race may overshoot by
the few requests in flight at that moment, which the cap's purpose tolerates.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.core.models import Origin, Platform
from bot.core.store.sql.tables import destinations, subscriptions


@dataclass(frozen=True, slots=True)
class SubscriptionLimits:
    per_destination: int = 50  # chat-made subscriptions in one channel, group or DM
    per_person: int = 200  # a person's own (DM / private chat) subscriptions on a platform


class SubscriptionLimitReached(Exception):
    """`subscribe` past a cap: which one (`destination` or `person`) and its number."""

    def __init__(self, scope: str, limit: int) -> None:
        super().__init__(f"the {scope} already has {limit} subscriptions, the most allowed")
        self.scope = scope
        self.limit = limit


async def check_limits(
    conn: AsyncConnection,
    platform: Platform,
    destination_id: int,
    owner: str | None,
    limits: SubscriptionLimits,
    origin: Origin,
) -> None:
    """Raise SubscriptionLimitReached when one more subscription of `origin` (the chats', not
    the config's) would pass a cap."""
    chat_made = subscriptions.c.origin == origin.value
    here = await conn.scalar(
        select(func.count()).where(subscriptions.c.destination_id == destination_id, chat_made)
    )
    if int(here or 0) >= limits.per_destination:
        raise SubscriptionLimitReached("destination", limits.per_destination)
    if owner is None:
        return
    owned = await conn.scalar(
        select(func.count())
        .select_from(subscriptions.join(destinations))
        .where(subscriptions.c.owner == owner, destinations.c.platform == platform.value, chat_made)
    )
    if int(owned or 0) >= limits.per_person:
        raise SubscriptionLimitReached("person", limits.per_person)
