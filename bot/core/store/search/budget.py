"""A query's time budget, and the database's refusals that are the query's fault, not an outage.

Every search, replay and `subscribe test` runs its statements inside `budgeted(conn, seconds)`:
- SQLite: a progress handler on the connection (sqlite runs in aiosqlite's thread, so the
  event loop is free meanwhile) interrupts the statement once the deadline has passed;
- PostgreSQL: `statement_timeout`, set for the query's own transaction only (set_config's
  `is_local`), cancels a statement that runs longer than the budget.
Work done in Python between statements checks the same Deadline.

A statement stopped by the budget raises QueryTooSlow; one the database refuses as too large
(SQLite's expression depth, PostgreSQL's program limits) raises QueryTooComplex. Neither is a
DBAPIError, so `store.errors.is_outage` never calls them an outage: the user is told to narrow
the query, not that the database cannot be reached.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

DEFAULT_SECONDS: Final = 5.0  # the `search.timeout_seconds` default
PROGRESS_STEPS: Final = 1000  # SQLite VM steps between two looks at the clock
# PostgreSQL SQLSTATEs: query_canceled (statement_timeout), program limits (too complex).
_CANCELED: Final = "57014"
_TOO_COMPLEX: Final = frozenset({"54000", "54001"})
# SQLite's messages for a statement it will not run because of its size or shape.
_SQLITE_TOO_COMPLEX: Final = (
    "expression tree is too large",
    "too many sql variables",
    "parser stack overflow",
    "too many terms in compound select",
    "like or glob pattern too complex",
    "string or blob too big",
)
_SET_TIMEOUT: Final = text("SELECT set_config('statement_timeout', :ms, true)")


class QueryTooSlow(Exception):
    """The query ran past its time budget (`seconds`)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"the query took longer than {seconds:g}s")


class QueryTooComplex(Exception):
    """The database refused the query's statement as too large (its message says which limit)."""


class Deadline:
    """When a query's budget runs out, from now."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.fired = False  # the SQLite progress handler interrupted a statement

    def passed(self) -> bool:
        return time.monotonic() >= self.at

    def check(self) -> None:
        """QueryTooSlow once the budget is spent (between statements, between chunks)."""
        if self.passed():
            raise QueryTooSlow(self.seconds)

    def interrupt(self) -> int:
        """SQLite's progress handler: nonzero stops the running statement."""
        if self.passed():
            self.fired = True
            return 1
        return 0


@asynccontextmanager
async def budgeted(conn: AsyncConnection, seconds: float) -> AsyncIterator[Deadline]:
    """Statements on `conn` within this block stop after `seconds` in all (QueryTooSlow);
    a statement the database refuses as too large is QueryTooComplex. On PostgreSQL this
    opens the connection's transaction (the timeout is local to it)."""
    deadline = Deadline(seconds)
    driver: Any = None
    try:
        if conn.dialect.name == "sqlite":
            driver = (await conn.get_raw_connection()).driver_connection
            await driver.set_progress_handler(deadline.interrupt, PROGRESS_STEPS)
        else:
            await conn.execute(_SET_TIMEOUT, {"ms": str(max(1, round(seconds * 1000)))})
        yield deadline
    except DBAPIError as error:
        refusal = _refusal(error, deadline)
        if refusal is None:
            raise
        raise refusal from error
    finally:
        if driver is not None:
            await driver.set_progress_handler(None, 0)


def _refusal(error: DBAPIError, deadline: Deadline) -> Exception | None:
    """The query's own fault as QueryTooSlow/QueryTooComplex; None for anything else."""
    cause = error.orig
    sqlstate = getattr(cause, "sqlstate", None)
    message = str(cause).lower()
    if sqlstate == _CANCELED or (deadline.fired and "interrupted" in message):
        return QueryTooSlow(deadline.seconds)
    if sqlstate in _TOO_COMPLEX or any(limit in message for limit in _SQLITE_TOO_COMPLEX):
        first = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
        return QueryTooComplex(first)
    return None
