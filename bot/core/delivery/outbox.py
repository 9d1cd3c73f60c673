"""Digest runs: planned once per (destination, scheduled time), their messages queued.

A run is a row unique on (destination, scheduled time): every replica may fire the same cron,
one insert wins. The winner selects what is new since the destination's watermark, renders it
and writes one outbox row per message, all in the same transaction. Senders claim rows in
order per destination (`FOR UPDATE SKIP LOCKED` on PostgreSQL, `BEGIN IMMEDIATE` on SQLite),
and each result is committed at once (`bot/core/delivery/ledger.py`). The watermark advances only
when every message of the run has reached a final state, so a restart resumes the rendered
rows and never recomputes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.delivery.ledger import RowStatus, RunStatus, advance_watermark
from bot.core.models import Format, Platform
from bot.core.render.flow import RenderedMessage
from bot.core.render.renderer import Renderer
from bot.core.select import StoredReport, build_digest, default_title, select_new
from bot.core.store.db import write_transaction
from bot.core.store.destinations import Destination
from bot.core.store.reports import WINDOW_LIMIT, WindowCache, count_after, reports_after
from bot.core.store.tables import destinations, digest_runs, outbox
from bot.logs import log

logger = logging.getLogger("prdigest.outbox")
PLATFORM_FORMAT = {
    Platform.SLACK: Format.SLACK,
    Platform.TELEGRAM: Format.TELEGRAM,
    Platform.CONSOLE: Format.TEXT,
}


@dataclass(frozen=True, slots=True)
class PlannedRun:
    run_id: int | None
    created: bool
    status: RunStatus | None = None
    entries: int = 0
    messages: int = 0


async def _insert_ignore(conn: AsyncConnection, values: dict[str, Any]) -> int | None:
    """Insert a run row unless (destination, scheduled_for) exists; the new id or None."""
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    statement = (
        insert(digest_runs)
        .values(**values)
        .on_conflict_do_nothing(index_elements=["destination_id", "scheduled_for"])
        .returning(digest_runs.c.id)
    )
    inserted = (await conn.execute(statement)).scalar()
    return None if inserted is None else int(inserted)


async def _window_start(conn: AsyncConnection, dest_id: int) -> int:
    """The watermark, or past the runs still being delivered (their entries are queued)."""
    watermark = (
        await conn.execute(select(destinations.c.watermark).where(destinations.c.id == dest_id))
    ).scalar_one()
    pending = (
        await conn.execute(
            select(func.max(digest_runs.c.to_seq)).where(
                digest_runs.c.destination_id == dest_id,
                digest_runs.c.status == RunStatus.PENDING.value,
            )
        )
    ).scalar()
    return max(int(watermark), int(pending or 0))


async def _read_window(
    conn: AsyncConnection, dest: Destination, start: int, windows: WindowCache | None
) -> list[StoredReport]:
    """The reports after `start`, at most WINDOW_LIMIT of them (a cap is logged)."""
    if windows is None:
        window = await reports_after(conn, start, WINDOW_LIMIT)
    else:
        window = await windows.after(conn, start)
    if len(window) == WINDOW_LIMIT:
        skipped = await count_after(conn, start) - WINDOW_LIMIT
        log(
            logger, "digest.window_capped", logging.WARNING, destination=dest.label, skipped=skipped
        )
    return window


async def _queue(
    conn: AsyncConnection,
    run_id: int,
    destination_id: int,
    messages: Sequence[RenderedMessage],
    now: datetime,
) -> None:
    """One pending outbox row per message of the run, in order."""
    for part, message in enumerate(messages):
        await conn.execute(
            outbox.insert().values(
                run_id=run_id,
                destination_id=destination_id,
                part=part,
                payload=message.payload,
                status=RowStatus.PENDING.value,
                attempts=0,
                next_attempt_at=now,
                created_at=now,
            )
        )


async def plan_digest(
    engine: AsyncEngine,
    dest: Destination,
    scheduled_for: datetime,
    renderer: Renderer,
    now: datetime,
    windows: WindowCache | None = None,
) -> PlannedRun:
    """Create the run for (dest, scheduled_for) and queue its messages, once across replicas.
    `windows` shares the reports read among the destinations one tick plans."""
    async with write_transaction(engine) as conn:
        run_id = await _insert_ignore(
            conn,
            {
                "destination_id": dest.id,
                "scheduled_for": scheduled_for,
                "created_at": now,
                "from_seq": 0,
                "to_seq": 0,
                "entries": 0,
                "messages": 0,
                "status": RunStatus.PENDING.value,
            },
        )
        if run_id is None:
            return PlannedRun(run_id=None, created=False)
        start = await _window_start(conn, dest.id)
        window = await _read_window(conn, dest, start, windows)
        end = max((item.seq for item in window), default=start)
        digest = build_digest(
            select_new(window, dest.filter, start, scheduled_for),
            dest.filter,
            default_title(dest.filter, dest.label),
        )
        messages = []
        if not digest.is_empty or dest.post_empty:
            fmt = PLATFORM_FORMAT[dest.platform]
            messages = renderer.digest(digest, fmt, dest.locale, date=scheduled_for.date())
        await _queue(conn, run_id, dest.id, messages, now)
        status = RunStatus.PENDING if messages else RunStatus.EMPTY
        await conn.execute(
            update(digest_runs)
            .where(digest_runs.c.id == run_id)
            .values(
                from_seq=start,
                to_seq=end,
                entries=digest.total,
                messages=len(messages),
                status=status.value,
                finished_at=None if messages else now,
            )
        )
        if not messages:
            await advance_watermark(conn, dest.id, end)
        return PlannedRun(run_id, True, status, digest.total, len(messages))
