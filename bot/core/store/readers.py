"""Who read each PR in a destination, and the digest messages a read changes.

A PR's read mark (`reading.py`: one row per destination and PR) keeps every reader's name in
its actor, one a line, in the order they pressed: the digest shows "✅ alice, bob" and the
chat hears of the PR's first read only. No table of its own: as many names as the column
holds (the first readers are kept). A digest message is found by the platform's id for it or
by its outbox row, with the payload it was rendered as (the edit starts from it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import and_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.models import Platform
from bot.core.store.bounds import max_chars
from bot.core.store.editions import PAYLOAD
from bot.core.store.reading import MarkKind, keys_in_message
from bot.core.store.sql.bulk import among
from bot.core.store.sql.db import write_transaction
from bot.core.store.sql.tables import destinations, outbox, reading_marks

# A read mark's actor keeps everyone who read the PR here, one name a line, in the order they
# pressed, as many as the column holds (the first readers are kept): one row per PR, no table.
READERS_SEP: Final = "\n"
ACTOR_MAX: Final = max_chars(reading_marks.c.actor)


def readers_of(actor: str) -> list[str]:
    """The names a read mark's actor holds (a mark of one reader is that name alone)."""
    return [name for name in actor.split(READERS_SEP) if name]


def _with_reader(names: list[str], name: str) -> list[str]:
    """`names` and `name` after them, when it is new and the actor still holds it."""
    if name in names or len(READERS_SEP.join([*names, name])) > ACTOR_MAX:
        return names
    return [*names, name]


async def put_read(
    engine: AsyncEngine, destination_id: int, subject: str, reader: str, at: datetime
) -> tuple[bool, list[str]]:
    """Mark PR `subject` read in the destination by `reader`: whether it is the PR's first
    read there, and everyone who read it, in order. A later reader joins the mark; its time
    stays the first read's."""
    name = " ".join(reader.split())[:ACTOR_MAX] or "?"
    try:
        return await _put_read(engine, destination_id, subject, name, at)
    except IntegrityError:  # PostgreSQL: another first read of the PR committed first
        return await _put_read(engine, destination_id, subject, name, at)


async def _put_read(
    engine: AsyncEngine, destination_id: int, subject: str, name: str, at: datetime
) -> tuple[bool, list[str]]:
    m = reading_marks
    where = and_(
        m.c.destination_id == destination_id,
        m.c.kind == MarkKind.READ.value,
        m.c.subject == subject,
    )
    async with write_transaction(engine) as conn:
        found = await conn.execute(select(m.c.actor).where(where).with_for_update())
        actor = found.scalar_one_or_none()
        if actor is None:
            row = {"destination_id": destination_id, "kind": MarkKind.READ.value}
            await conn.execute(m.insert().values(**row, subject=subject, actor=name, at=at))
            return True, [name]
        names = readers_of(str(actor))
        grown = _with_reader(names, name)
        if grown != names:
            await conn.execute(update(m).where(where).values(actor=READERS_SEP.join(grown)))
        return False, grown


async def readers_in(
    engine: AsyncEngine, destination_id: int, subjects: Sequence[str]
) -> dict[str, list[str]]:
    """Who read each of these PRs in the destination (a PR nobody read is left out)."""
    if not subjects:
        return {}
    m = reading_marks
    query = select(m.c.subject, m.c.actor).where(
        m.c.destination_id == destination_id,
        m.c.kind == MarkKind.READ.value,
        among(m.c.subject, list(subjects)),
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    return {str(row.subject): readers_of(str(row.actor)) for row in rows}


@dataclass(frozen=True, slots=True)
class SentDigest:
    """A digest message as it was posted to a destination: its outbox row, the platform's id
    for it, the payload it was rendered as, and the PRs it shows, in order."""

    row: int
    external_id: str
    payload: dict[str, Any]
    keys: list[str]


async def sent_digest(
    engine: AsyncEngine, platform: Platform, target: str, external_id: str = "", row: int = 0
) -> SentDigest | None:
    """The digest message sent to (platform, target) with the platform's id `external_id`,
    or with the outbox row `row`; None when that destination got no such message."""
    o = outbox
    query = (
        select(o.c.id, o.c.external_id, PAYLOAD)
        .join(destinations, destinations.c.id == o.c.destination_id)
        .where(
            destinations.c.platform == platform.value,
            destinations.c.target == target,
            o.c.external_id == external_id if external_id else o.c.id == row,
            o.c.external_id.is_not(None),
        )
        .limit(1)
    )
    async with engine.connect() as conn:
        found = (await conn.execute(query)).first()
    if found is None or not isinstance(found.payload, dict):
        return None
    sent = str(found.external_id)
    keys = await keys_in_message(engine, platform, target, sent)
    return SentDigest(int(found.id), sent, dict(found.payload), keys)
