"""Editions: a rendered digest stored once for every destination that receives it.

The planner groups a tick's due destinations by what their digest holds (the PRs, the locale,
the platform, the layout, the verbosity: `bot/core/delivery/editions.py`) and writes one
edition per group: its messages and its entries. Each destination's run then points at it and
its outbox rows carry no payload of their own; `PAYLOAD` is the payload a row sends, its own
(rows queued before editions, or outside a run) or its edition's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, Column, Table, Text, and_, bindparam, cast, func, literal, select
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.core.digest.select import StoredReport
from bot.core.record import record
from bot.core.reports.model import RecommendationLevel
from bot.core.store.sql.bulk import among, insert_columns
from bot.core.store.sql.db import json_encoded
from bot.core.store.sql.tables import (
    digest_runs,
    edition_entries,
    edition_messages,
    editions,
    outbox,
)
from bot.core.store.statuses import RowStatus

# Editions serialized between two turns of the event loop (a few milliseconds' work): a batch
# writes hundreds, and the chat's answers share the loop with the tick.
FILL_SLICE = 16


class EntryKind(StrEnum):
    NEW = "new"  # shown as new in the run
    UNREAD = "unread"  # carried over from an earlier digest, shown under "Still unread"


@record
class EntryRow:
    position: int
    item: StoredReport
    tag: str
    kind: EntryKind
    part: int | None


def _edition_payload() -> Any:
    """The payload of the outbox row's message in its run's edition (a correlated subquery)."""
    return (
        select(edition_messages.c.payload)
        .join(digest_runs, digest_runs.c.edition_id == edition_messages.c.edition_id)
        .where(and_(digest_runs.c.id == outbox.c.run_id, edition_messages.c.part == outbox.c.part))
        .scalar_subquery()
    )


# What an outbox row sends: its own payload, else its edition's message of the same part.
PAYLOAD = func.coalesce(outbox.c.payload, _edition_payload(), type_=JSON).label("payload")


async def new_editions(conn: AsyncConnection, count: int) -> list[int]:
    """`count` new editions' ids, reserved: their buttons carry them, so they come before the
    render; `fill_editions` writes the rows, in the same transaction.

    On SQLite the ids are the next ones past the highest (what SQLite would give them: the
    table has no AUTOINCREMENT); the batch's `BEGIN IMMEDIATE` holds the only writer's lock
    until they are written. On PostgreSQL they are the table's sequence's next values."""
    if count <= 0:
        return []
    if conn.dialect.name != "postgresql":
        highest = (await conn.execute(select(func.max(editions.c.id)))).scalar() or 0
        return list(range(highest + 1, highest + 1 + count))
    sequence = func.pg_get_serial_sequence(editions.name, editions.c.id.name)
    ids = select(func.nextval(sequence)).select_from(func.generate_series(1, count))
    return [int(edition_id) for edition_id in (await conn.execute(ids)).scalars()]


@record
class EditionMessage:
    payload: dict[str, Any]
    reply_to_part: int | None = None  # threaded: the part it replies to
    topic: str | None = None  # topics: the forum topic's key


@dataclass(frozen=True, slots=True)
class EditionContent:
    """What an edition holds: its messages in sending order, its shown entries in digest
    order, and the PRs behind its "+N more" in the order its pages post them."""

    id: int
    messages: Sequence[EditionMessage]
    shown: Sequence[EntryRow]
    more: Sequence[StoredReport] = ()


def _more_list(content: EditionContent) -> list[tuple[int, str, int, str, bool]] | None:
    """`editions.more`: [seq, repo, number, tag, must_read] for each PR behind "+N more"."""
    return [item.listing for item in content.more] or None


async def fill_editions(
    conn: AsyncConnection, now: datetime, contents: Sequence[EditionContent]
) -> None:
    """The rows of editions whose ids `new_editions` reserved: each edition (with its "+N
    more" list), its messages and its shown entries, in three statements."""
    if conn.dialect.name != "postgresql":
        await _fill_sqlite(conn, now, contents)
        return
    await conn.execute(
        editions.insert(),
        [{"id": c.id, "created_at": now, "more_count": len(c.more), "more": _more_list(c)}
         for c in contents],
    )  # fmt: skip
    messages = [
        {"edition_id": content.id, "part": part, "payload": message.payload}
        | {"reply_to_part": message.reply_to_part, "topic": message.topic}
        for content in contents
        for part, message in enumerate(content.messages)
    ]
    if messages:
        await conn.execute(edition_messages.insert(), messages)
    await insert_columns(conn, edition_entries, _entry_columns(contents))


def _driver_insert(conn: AsyncConnection, table: Table) -> str:
    """The table's INSERT of every column, in the table's order, in the driver's own terms; a
    JSON column's value is given as `json_encoded`'s UTF-8 bytes, stored as text by a CAST
    (the text is never decoded into Python and encoded again by the driver)."""
    values = {
        column.name: cast(bindparam(column.name), Text)
        if isinstance(column.type, JSON)
        else bindparam(column.name)
        for column in table.c
    }
    return str(table.insert().values(values).compile(dialect=conn.dialect))


def _serializer(conn: AsyncConnection, column: Column[Any]) -> Callable[[Any], Any]:
    """The column type's bind processing, in the connection's dialect."""
    dialect = conn.dialect
    process = column.type.dialect_impl(dialect).bind_processor(dialect)
    assert process is not None  # times are always processed
    return process


async def _fill_sqlite(
    conn: AsyncConnection, now: datetime, contents: Sequence[EditionContent]
) -> None:
    """`fill_editions` on SQLite: rows as tuples through the driver's executemany. A batch's
    editions hold tens of thousands of entries; SQLAlchemy's per-row binding, or a JSON
    array of them unpacked by `json_each` (a `json_extract` per value), costs several times
    what SQLite takes to store them. JSON is bound as `json_encoded`'s bytes (`_driver_insert`
    stores them as text), times by their column type; every other value is an integer, text,
    a flag or None, stored as it is."""
    dumps = json_encoded
    created = _serializer(conn, editions.c.created_at)(now)
    must = RecommendationLevel.MUST_READ
    made: list[tuple[Any, ...]] = []
    messages: list[tuple[Any, ...]] = []
    entries: list[tuple[Any, ...]] = []
    for index, content in enumerate(contents, 1):
        more = _more_list(content)
        made.append((content.id, created, len(content.more), None if more is None else dumps(more)))
        messages += [  # in the table's column order
            (content.id, part, dumps(message.payload), message.reply_to_part, message.topic)
            for part, message in enumerate(content.messages)
        ]
        entries += [  # in the table's column order
            (content.id, row.position, row.item.seq, row.item.report.repo,
             row.item.report.number, row.tag, row.item.report.recommendation_level is must,
             row.kind.value, row.part)
            for row in content.shown
        ]  # fmt: skip
        if index % FILL_SLICE == 0:
            await asyncio.sleep(0)  # the chat's answers run between slices
    await conn.exec_driver_sql(_driver_insert(conn, editions), made)
    if messages:
        await conn.exec_driver_sql(_driver_insert(conn, edition_messages), messages)
    if entries:
        await conn.exec_driver_sql(_driver_insert(conn, edition_entries), entries)


async def queue_editions(conn: AsyncConnection, run_ids: Sequence[int], now: datetime) -> None:
    """The pending outbox rows of runs: one per message of each run's edition, in (run, part) order,
    so that a destination's rows are claimed in sending order."""
    if not run_ids:
        return
    m, r = edition_messages, digest_runs
    rows = (
        select(
            r.c.id,
            r.c.destination_id,
            m.c.part,
            literal(RowStatus.PENDING.value),
            literal(0),
            literal(now, outbox.c.next_attempt_at.type),
            literal(now, outbox.c.created_at.type),
            m.c.reply_to_part,
            m.c.topic,
        )
        .join(m, m.c.edition_id == r.c.edition_id)
        .where(among(r.c.id, run_ids))
        .order_by(r.c.id, m.c.part)
    )
    columns = [
        "run_id",
        "destination_id",
        "part",
        "status",
        "attempts",
        "next_attempt_at",
        "created_at",
        "reply_to_part",
        "topic",
    ]
    await conn.execute(outbox.insert().from_select(columns, rows))


def _entry_columns(contents: Sequence[EditionContent]) -> dict[str, list[Any]]:
    entries = [(content.id, row) for content in contents for row in content.shown]
    must = RecommendationLevel.MUST_READ
    return {
        "edition_id": [edition for edition, _ in entries],
        "position": [row.position for _, row in entries],
        "seq": [row.item.seq for _, row in entries],
        "repo": [row.item.report.repo for _, row in entries],
        "number": [row.item.report.number for _, row in entries],
        "tag": [row.tag for _, row in entries],
        "must_read": [row.item.report.recommendation_level is must for _, row in entries],
        "kind": [row.kind.value for _, row in entries],
        "part": [row.part for _, row in entries],
    }
