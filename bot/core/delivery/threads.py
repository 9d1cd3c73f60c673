"""Where a threaded or topics message goes: its parent's platform id, or its forum topic.

A destination's rows are sent one at a time, in order (ledger.claim takes a row only once every
earlier row of its destination is final, across replicas). So when a reply is claimed its
parent is final: sent (its `external_id` is the id to reply to) or failed for good (the reply is
sent flat rather than lost). And the first row that needs a forum topic opens it while no other
row of that destination is in flight anywhere: a topic is opened once, then reused from
`forum_topics` by every later message and digest. A process killed between opening a topic and
recording it leaves that topic unused (at most one per kill); the next sender opens another.

A chat the platform says is not a forum falls back to flat: this message and every later one
go to the chat itself, later runs are planned flat, and the notice the planner rendered is
queued once (after the rows already queued).

A sender's side of this (`Threads`, `Placement` and what opening a topic answers) is in
`port.py`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.delivery.ledger import Claimed
from bot.core.delivery.port import NotForum, Opened, Outcome, Placement, Refused, Threads
from bot.core.logs import log
from bot.core.store.sql.db import write_transaction
from bot.core.store.sql.tables import destinations, forum_topics, outbox
from bot.core.store.statuses import RowStatus

logger = logging.getLogger("prdigest.delivery")

FORUM_RECHECK = timedelta(days=1)  # a chat found not to be a forum is asked again after this


def flat_for_now(forum: bool | None, checked_at: datetime | None, now: datetime) -> bool:
    """Whether a topics layout posts flat here: the chat was found not to be a forum, less
    than FORUM_RECHECK ago (topics may have been turned on since)."""
    if forum is not False:
        return False
    return checked_at is None or now - checked_at < FORUM_RECHECK


@dataclass(frozen=True, slots=True)
class Placed:
    """The payload to send, placed in its thread or topic."""

    payload: Mapping[str, object]


async def place(
    engine: AsyncEngine, sender: object, row: Claimed, now: datetime
) -> Placed | Outcome:
    """The row's payload placed in its thread or topic (`Placed`), or (a topic could not be
    opened yet) the outcome to record for the row instead of sending it."""
    flat = Placed(row.payload)
    if (row.reply_to_part is None and row.topic is None) or not isinstance(sender, Threads):
        return flat
    if row.reply_to_part is not None:
        parent = await _parent_id(engine, row)
        if parent is None:  # the parent failed for good: the reply is not lost
            return flat
        return Placed(sender.placed(row.payload, Placement(reply_to=parent)))
    assert row.topic is not None
    flat_now, name, thread = await _topic(engine, row.destination_id, row.topic, now)
    if flat_now or name is None:
        return flat
    if thread is None:
        opened = await sender.open_topic(row.target, name)
        if isinstance(opened, NotForum):
            await not_a_forum(engine, row.destination_id, opened.reason, now)
            return flat
        if isinstance(opened, Refused):
            log(logger, "topic.refused", logging.WARNING, row=row.id, reason=opened.reason)
            return flat
        if not isinstance(opened, Opened):
            return opened
        thread = await _record_topic(engine, row.destination_id, row.topic, opened.thread, now)
    return Placed(sender.placed(row.payload, Placement(thread=thread)))


async def forget_topic(engine: AsyncEngine, row: Claimed) -> None:
    """The row's topic was deleted in the chat: the next message that needs it opens a new one."""
    async with write_transaction(engine) as conn:
        await conn.execute(
            update(forum_topics)
            .where(
                forum_topics.c.destination_id == row.destination_id,
                forum_topics.c.key == row.topic,
            )
            .values(thread_id=None, opened_at=None)
        )
    log(logger, "topic.gone", logging.WARNING, destination=row.destination_id, key=row.topic)


async def _parent_id(engine: AsyncEngine, row: Claimed) -> str | None:
    """The platform id of the message this row replies to, if it was sent."""
    query = select(outbox.c.external_id).where(
        outbox.c.run_id == row.run_id,
        outbox.c.part == row.reply_to_part,
        outbox.c.status == RowStatus.SENT.value,
    )
    async with engine.connect() as conn:
        found = (await conn.execute(query)).scalar()
    return None if found is None else str(found)


async def _topic(
    engine: AsyncEngine, destination_id: int, key: str, now: datetime
) -> tuple[bool, str | None, str | None]:
    """(whether the chat gets topics flat for now, the topic's name, its thread once opened)."""
    async with engine.connect() as conn:
        state = (
            await conn.execute(
                select(destinations.c.forum, destinations.c.forum_checked_at).where(
                    destinations.c.id == destination_id
                )
            )
        ).one()
        topic = (
            await conn.execute(
                select(forum_topics.c.name, forum_topics.c.thread_id).where(
                    forum_topics.c.destination_id == destination_id, forum_topics.c.key == key
                )
            )
        ).first()
    flat_now = flat_for_now(state.forum, state.forum_checked_at, now)
    if topic is None:
        return flat_now, None, None
    return flat_now, str(topic.name), None if topic.thread_id is None else str(topic.thread_id)


async def _record_topic(
    engine: AsyncEngine, destination_id: int, key: str, thread: str, now: datetime
) -> str:
    """Remember an opened topic; the one recorded first wins (a sender whose lease ran out
    may have opened one too)."""
    mine = forum_topics.c.destination_id == destination_id, forum_topics.c.key == key
    async with write_transaction(engine) as conn:
        await conn.execute(
            update(forum_topics)
            .where(*mine, forum_topics.c.thread_id.is_(None))
            .values(thread_id=thread, opened_at=now)
        )
        await conn.execute(  # a later "not a forum" is news again, and said again
            update(destinations)
            .where(destinations.c.id == destination_id)
            .values(forum=True, forum_checked_at=now, forum_told_at=None)
        )
        kept = (await conn.execute(select(forum_topics.c.thread_id).where(*mine))).scalar()
    log(logger, "topic.opened", destination=destination_id, key=key, thread=thread)
    return thread if kept is None else str(kept)


async def not_a_forum(engine: AsyncEngine, destination_id: int, reason: str, now: datetime) -> None:
    """Remember that the chat has no topics (asked again after FORUM_RECHECK), and queue the
    notice saying so, once: not again while the chat stays without topics."""
    async with write_transaction(engine) as conn:
        found = (
            await conn.execute(
                select(destinations.c.forum_told_at, destinations.c.layout_notice).where(
                    destinations.c.id == destination_id
                )
            )
        ).one()
        values: dict[str, object] = {"forum": False, "forum_checked_at": now, "updated_at": now}
        if found.forum_told_at is None and found.layout_notice is not None:
            values.update(forum_told_at=now, layout_notice=None)
            await conn.execute(
                outbox.insert().values(
                    run_id=None,
                    destination_id=destination_id,
                    part=0,
                    payload=found.layout_notice,
                    status=RowStatus.PENDING.value,
                    attempts=0,
                    next_attempt_at=now,
                    created_at=now,
                )
            )
        await conn.execute(
            update(destinations).where(destinations.c.id == destination_id).values(**values)
        )
    log(
        logger,
        "destination.not_a_forum",
        logging.WARNING,
        destination=destination_id,
        reason=reason,
    )
