"""Named leases: work that only one replica may do at a time (Telegram long polling).

A lease is a row (name, holder, expires_at). Taking it succeeds when nobody holds it, the
holder is us, or the holder's lease expired (it died without releasing); the holder renews it
well before it expires.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.store.sql.db import write_transaction
from bot.core.store.sql.tables import leases


@dataclass(frozen=True, slots=True)
class LeaseHeld:
    """Another holder has the lease until `expires_at`."""

    holder: str
    expires_at: datetime


async def take(
    engine: AsyncEngine, name: str, holder: str, now: datetime, ttl: timedelta
) -> LeaseHeld | None:
    """Take or renew the lease; None on success, else who holds it."""
    async with write_transaction(engine) as conn:
        insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
        await conn.execute(
            insert(leases)
            .values(name=name, holder=holder, expires_at=now + ttl)
            .on_conflict_do_nothing(index_elements=["name"])
        )
        await conn.execute(
            update(leases)
            .where(
                leases.c.name == name,
                or_(leases.c.holder == holder, leases.c.expires_at < now),
            )
            .values(holder=holder, expires_at=now + ttl)
        )
        row = (
            await conn.execute(
                select(leases.c.holder, leases.c.expires_at).where(leases.c.name == name)
            )
        ).one()
    if row.holder == holder:
        return None
    return LeaseHeld(str(row.holder), row.expires_at)


async def release(engine: AsyncEngine, name: str, holder: str) -> None:
    async with write_transaction(engine) as conn:
        await conn.execute(delete(leases).where(leases.c.name == name, leases.c.holder == holder))
