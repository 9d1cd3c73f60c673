"""What chats changed in their subscriptions, and who: the log `prdigest status` shows last."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.store.sql.tables import destinations, subscription_changes


@dataclass(frozen=True, slots=True)
class Change:
    destination: str
    actor: str
    action: str
    detail: str
    at: datetime


async def record_change(
    conn: AsyncConnection, destination_id: int, actor: str, action: str, detail: str, at: datetime
) -> None:
    await conn.execute(
        subscription_changes.insert().values(
            destination_id=destination_id,
            actor=actor[:128],
            action=action,
            detail=detail[:2000],
            at=at,
        )
    )


async def recent_changes(engine: AsyncEngine, limit: int = 10) -> list[Change]:
    """The newest changes made from chats, newest first."""
    query = (
        select(
            destinations.c.platform,
            destinations.c.target,
            subscription_changes.c.actor,
            subscription_changes.c.action,
            subscription_changes.c.detail,
            subscription_changes.c.at,
        )
        .join(destinations, destinations.c.id == subscription_changes.c.destination_id)
        .order_by(subscription_changes.c.id.desc())
        .limit(limit)
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    return [Change(f"{r.platform}:{r.target}", r.actor, r.action, r.detail, r.at) for r in rows]
