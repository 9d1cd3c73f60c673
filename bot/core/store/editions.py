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

from psycopg.types.json import Json
from sqlalchemy import JSON, Column, Table, and_, func, literal, select
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
    more" list), its messages and its shown entries, in three statements.

    The rows go to the driver's executemany as tuples: a batch writes hundreds of editions
    with tens of thousands of entries, and SQLAlchemy's per-row binding (or, on SQLite, a
    JSON array of rows unpacked by `json_each`, a `json_extract` per value) costs several
    times what the database takes to store them. Times are bound by their column type, JSON
    as `_driver_insert` says; every other value is an integer, text, a flag or None, stored
    as it is. On PostgreSQL the entries travel as one array per column (`insert_columns`)."""
    postgres = conn.dialect.name == "postgresql"
    encode: Callable[[Any], Any] = Json if postgres else json_encoded
    created = _serializer(conn, editions.c.created_at)(now)
    made: list[tuple[Any, ...]] = []
    messages: list[tuple[Any, ...]] = []
    entries: list[tuple[Any, ...]] = []
    for index, content in enumerate(contents, 1):
        more = _more_list(content)
        made.append(
            (content.id, created, len(content.more), None if more is None else encode(more))
        )
        messages += [  # in the table's column order
            (content.id, part, encode(message.payload), message.reply_to_part, message.topic)
            for part, message in enumerate(content.messages)
        ]
        entries += _entry_tuples(content)
        if index % FILL_SLICE == 0:
            await asyncio.sleep(0)  # the chat's answers run between slices
    await conn.exec_driver_sql(_driver_insert(conn, editions), made)
    if messages:
        await conn.exec_driver_sql(_driver_insert(conn, edition_messages), messages)
    if postgres and entries:
        columns = zip(*entries, strict=True)  # (the table's column order, as the tuples')
        await insert_columns(conn, edition_entries, dict(zip(_ENTRY_NAMES, columns, strict=True)))
    elif entries:
        await conn.exec_driver_sql(_driver_insert(conn, edition_entries), entries)


_ENTRY_NAMES = [column.name for column in edition_entries.c]


def _entry_tuples(content: EditionContent) -> list[tuple[Any, ...]]:
    """An edition's `edition_entries` rows, in the table's column order."""
    must = RecommendationLevel.MUST_READ
    return [
        (content.id, row.position, row.item.seq, row.item.report.repo, row.item.report.number,
         row.tag, row.item.report.recommendation_level is must, row.kind.value, row.part)
        for row in content.shown
    ]  # fmt: skip


def _driver_insert(conn: AsyncConnection, table: Table) -> str:
    """The table's INSERT of every column, in the table's order, positional in the driver's
    terms. A JSON column's value is, on SQLite, `json_encoded`'s UTF-8 bytes stored as text by
    a CAST; on PostgreSQL psycopg's `Json`, which the engine's serializer dumps to bytes sent
    as they are (the text is never decoded into Python and encoded again by the driver)."""
    postgres = conn.dialect.name == "postgresql"
    mark = "%s" if postgres else "?"
    values = [
        f"CAST({mark} AS TEXT)" if isinstance(column.type, JSON) and not postgres else mark
        for column in table.c
    ]
    names = ", ".join(column.name for column in table.c)  # (our own table's: no input here)
    return f"INSERT INTO {table.name} ({names}) VALUES ({', '.join(values)})"  # noqa: S608


def _serializer(conn: AsyncConnection, column: Column[Any]) -> Callable[[Any], Any]:
    """The column type's bind processing, in the connection's dialect."""
    dialect = conn.dialect
    process = column.type.dialect_impl(dialect).bind_processor(dialect)
    assert process is not None  # times are always processed
    return process


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
