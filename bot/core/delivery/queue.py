"""How a run's rendered parts become outbox rows, per layout.

- flat: every message in order, none a reply.
- threaded: the summary's first message is the parent; every later message of the run replies
  to it (`reply_to_part` = the parent's part). The deliverer sends a destination's rows in
  order, so a reply is claimed only once its parent is final, its platform id known.
- topics: the summary goes to the chat itself (a forum's General topic); each tag group's
  messages go to the forum topic of that tag (`topic` = the tag). The topic's row in
  `forum_topics` is written here (its name, no thread yet); the sender of the first message
  that needs it opens it (bot/core/delivery/threads.py).

A topics layout on a destination the platform said is not a forum is planned flat (for a day;
then topics are tried again, in case they were turned on), and the notice saying so is rendered
here (the planner knows the run's language), queued once by the deliverer when it learns the
chat is not a forum.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.core.delivery.threads import flat_for_now
from bot.core.models import Format, Layout, Locale
from bot.core.record import record
from bot.core.render.limits.telegram import TELEGRAM_TOPIC_NAME_MAX
from bot.core.render.options import DigestPart
from bot.core.render.renderer import Renderer
from bot.core.store.sql.db import insert_ignore
from bot.core.store.sql.tables import destinations, forum_topics

TOPIC_KEY_MAX = 128  # forum_topics.key
NOT_FORUM_NOTICE = "topics_not_forum"  # the labels' notice key


@record
class Queued:
    """One message of a run as its outbox row holds it."""

    payload: dict[str, Any]
    reply_to_part: int | None = None
    topic: str | None = None
    shows: tuple[int, ...] = ()  # the reports (seqs) whose entries it holds: reading state


def lay_out(parts: Sequence[DigestPart], layout: Layout) -> list[Queued]:
    """The run's messages in sending order, each knowing its parent or its topic."""
    # The renderer's first part is the summary (threaded, topics) or the whole digest (flat).
    messages = [(at, part, message) for at, part in enumerate(parts) for message in part.messages]
    if layout is Layout.THREADED:
        return [
            Queued(message.payload, None if index == 0 else 0, shows=message.shows)
            for index, (_, _, message) in enumerate(messages)
        ]
    if layout is Layout.TOPICS:
        return [
            Queued(
                message.payload, topic=None if at == 0 else topic_key(part.key), shows=message.shows
            )
            for at, part, message in messages
        ]
    return [Queued(message.payload, shows=message.shows) for _, _, message in messages]


def topic_key(key: str) -> str:
    return key[:TOPIC_KEY_MAX]


async def layout_for(
    conn: AsyncConnection, destination_id: int, wanted: Layout, now: datetime
) -> Layout:
    """The layout a run is planned with: topics fall back to flat where the platform said the
    chat is not a forum (until it is asked again, threads.FORUM_RECHECK later)."""
    if wanted is not Layout.TOPICS:
        return wanted
    state = (
        await conn.execute(
            select(destinations.c.forum, destinations.c.forum_checked_at).where(
                destinations.c.id == destination_id
            )
        )
    ).one()
    return Layout.FLAT if flat_for_now(state.forum, state.forum_checked_at, now) else wanted


def topics_of(parts: Sequence[DigestPart]) -> tuple[tuple[str, str], ...]:
    """A topics layout's forum topics: (key, name) of each tag group (not the summary)."""
    return tuple(
        (topic_key(p.key), (p.label or p.key)[:TELEGRAM_TOPIC_NAME_MAX]) for p in parts[1:]
    )


async def prepare_topics(
    conn: AsyncConnection,
    destination_id: int,
    topics: Sequence[tuple[str, str]],
    notice: tuple[Renderer, Format, Locale],
    now: datetime,
) -> None:
    """A forum topic row per tag group not seen here before (its name; opened on first use),
    and the not-a-forum notice, unless the chat was told already."""
    for key, name in topics:
        values = {"destination_id": destination_id, "key": key, "name": name, "created_at": now}
        await insert_ignore(conn, forum_topics, values, forum_topics.c.key)
    renderer, fmt, locale = notice
    payload = renderer.notice(NOT_FORUM_NOTICE, fmt, locale).payload
    await conn.execute(
        update(destinations)
        .where(
            destinations.c.id == destination_id,
            destinations.c.forum_told_at.is_(None),
            destinations.c.layout_notice.is_(None),
        )
        .values(layout_notice=payload)
    )
