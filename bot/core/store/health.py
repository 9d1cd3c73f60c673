"""Whether the store can be used right now, for `/readyz`: reachable, and writable.

PostgreSQL down (refused, killed connections) fails the `SELECT 1`. A SQLite file that another
connection holds write-locked still answers reads, while every write waits out the 15 s busy
timeout and then fails: so on SQLite the probe also asks for the write lock, giving up after
WRITE_PROBE_SECONDS, and rolls back at once (it never writes).
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
import weakref

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

WRITE_PROBE_SECONDS = 2.0
REASON_CHARS = 160
# A healthy answer is reused this long: commands and ingest calls ask before they write, so
# that an outage is told at once instead of after the busy timeout, without a probe per
# request. A problem is never reused: the first request after the outage must go through.
FRESH_SECONDS = 1.0

_healthy_at: weakref.WeakKeyDictionary[AsyncEngine, float] = weakref.WeakKeyDictionary()


def _first_line(error: BaseException) -> str:
    lines = str(getattr(error, "orig", None) or error).strip().splitlines()
    line = lines[0] if lines else ""
    line = line if len(line) <= REASON_CHARS else line[:REASON_CHARS] + "…"
    return f"{type(error).__name__}: {line}" if line else type(error).__name__


def _sqlite_write_lock(path: str) -> None:
    """Take SQLite's write lock and give it back (raises sqlite3.OperationalError if held)."""
    conn = sqlite3.connect(path, timeout=WRITE_PROBE_SECONDS, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    finally:
        conn.close()


async def store_problem(engine: AsyncEngine, fresh: float = FRESH_SECONDS) -> str | None:
    """Why the store cannot serve now ("unreachable: …", "locked: …"), or None; a healthy
    answer less than `fresh` seconds old is reused."""
    if time.monotonic() - _healthy_at.get(engine, float("-inf")) < fresh:
        return None
    problem = await _probe(engine)
    if problem is None:
        _healthy_at[engine] = time.monotonic()
    return problem


async def _probe(engine: AsyncEngine) -> str | None:
    try:
        async with engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
    except (SQLAlchemyError, OSError) as error:
        return f"unreachable: {_first_line(error)}"
    path = engine.url.database if engine.dialect.name == "sqlite" else None
    if path and path != ":memory:":
        try:
            await asyncio.to_thread(_sqlite_write_lock, path)
        except sqlite3.Error as error:
            if "locked" in str(error) or "busy" in str(error):
                held = f"{WRITE_PROBE_SECONDS:g} s"
                return f"locked: another connection has held the write lock for over {held}"
            return f"unwritable: {_first_line(error)}"
    return None
