"""Destinations: the places digests go to (a Slack channel or DM, a Telegram chat, a console).

A destination is keyed by (platform, target) and holds any number of subscriptions
(`store/subscriptions.py`): what it reads and when. Sending is per destination: its messages
leave in order, at the platform's pace, and a destination that fails for good (channel
archived, bot kicked) is deactivated with the reason and kept, so `prdigest status` can say why
and re-adding the bot can turn it back on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.clock import Clock, utc_clock
from bot.core.models import Locale, Platform
from bot.core.store.sql.db import write_transaction
from bot.core.store.sql.tables import destinations, subscriptions


@dataclass(frozen=True, slots=True)
class Destination:
    id: int
    platform: Platform
    target: str
    active: bool
    deactivated_reason: str | None
    consecutive_failures: int

    @property
    def label(self) -> str:
        return f"{self.platform.value}:{self.target}"


def _from_row(row: Any) -> Destination:
    return Destination(
        id=int(row.id),
        platform=Platform(row.platform),
        target=str(row.target),
        active=bool(row.active),
        deactivated_reason=row.deactivated_reason,
        consecutive_failures=int(row.consecutive_failures),
    )


async def ensure_destination(
    conn: AsyncConnection, platform: Platform, target: str, now: Any
) -> int:
    """The id of (platform, target), inserted if new. Replicas may race: ON CONFLICT DO
    NOTHING, then read."""
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    await conn.execute(
        insert(destinations)
        .values(
            platform=platform.value,
            target=target,
            active=True,
            consecutive_failures=0,
            created_at=now,
            updated_at=now,
        )
        .on_conflict_do_nothing(index_elements=["platform", "target"])
    )
    found = await conn.execute(
        select(destinations.c.id).where(
            destinations.c.platform == platform.value, destinations.c.target == target
        )
    )
    return int(found.scalar_one())


class DestinationStore:
    def __init__(self, engine: AsyncEngine, clock: Clock = utc_clock) -> None:
        self.engine = engine
        self.clock = clock  # stamps created_at / updated_at

    async def all(self, active_only: bool = False) -> list[Destination]:
        query = select(destinations).order_by(destinations.c.id)
        if active_only:
            query = query.where(destinations.c.active.is_(True))
        async with self.engine.connect() as conn:
            return [_from_row(row) for row in (await conn.execute(query)).all()]

    async def get(self, destination_id: int) -> Destination | None:
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(select(destinations).where(destinations.c.id == destination_id))
            ).first()
        return None if row is None else _from_row(row)

    async def find(self, platform: Platform, target: str) -> Destination | None:
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(
                    select(destinations).where(
                        destinations.c.platform == platform.value,
                        destinations.c.target == target,
                    )
                )
            ).first()
        return None if row is None else _from_row(row)

    async def locale_of(self, platform: Platform, target: str) -> Locale | None:
        """The language the destination's digests speak: its first subscription's."""
        query = (
            select(subscriptions.c.locale)
            .join(destinations, destinations.c.id == subscriptions.c.destination_id)
            .where(destinations.c.platform == platform.value, destinations.c.target == target)
            .order_by(subscriptions.c.number)
            .limit(1)
        )
        async with self.engine.connect() as conn:
            found = (await conn.execute(query)).scalar()
        return None if found is None else Locale(found)

    async def set_active(
        self, destination_id: int, active: bool, reason: str | None = None
    ) -> None:
        async with write_transaction(self.engine) as conn:
            await conn.execute(
                update(destinations)
                .where(destinations.c.id == destination_id)
                .values(
                    active=active,
                    deactivated_reason=None if active else reason,
                    consecutive_failures=0,
                    updated_at=self.clock(),
                )
            )

    async def move(self, destination_id: int, new_target: str) -> None:
        """A Telegram group became a supergroup: same destination, new chat id."""
        async with write_transaction(self.engine) as conn:
            await conn.execute(
                update(destinations)
                .where(destinations.c.id == destination_id)
                .values(target=new_target, updated_at=self.clock())
            )
