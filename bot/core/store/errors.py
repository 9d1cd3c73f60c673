"""Telling a database outage from a row the database refuses.

An outage (server down, connection dropped, SQLite lock held past the busy timeout) is worth
retrying later: the web API answers 503 with Retry-After, a source does not remember the file
as seen. A refused row (a value out of the column's range, too long, not encodable) is the
report's fault: it is rejected by name and the others are stored.
"""

from __future__ import annotations

from sqlalchemy.exc import (
    DBAPIError,
    DisconnectionError,
    InterfaceError,
    OperationalError,
    SQLAlchemyError,
    StatementError,
)
from sqlalchemy.exc import TimeoutError as PoolTimeout

REASON_LIMIT = 200  # characters of the database's message kept in a rejection reason

# OSError covers ConnectionError and TimeoutError; PoolTimeout is every pooled connection busy.
_OUTAGES = (OperationalError, InterfaceError, DisconnectionError, PoolTimeout, OSError)
# What writing one bad row raises: the driver's DataError / IntegrityError, or the value's own
# error while it is bound (OverflowError for an int SQLite cannot hold, UnicodeEncodeError).
REFUSALS = (SQLAlchemyError, ValueError, ArithmeticError, TypeError)


def is_outage(error: BaseException) -> bool:
    """True for errors that say the database is unavailable, not that the data is bad."""
    if isinstance(error, DBAPIError) and error.connection_invalidated:
        return True
    return isinstance(error, _OUTAGES)


def refusal_reason(error: BaseException) -> str:
    """`the store refused it: <Type>: <first line of the driver's message>`, never the SQL or
    its parameters (a 2 MB report would be echoed whole)."""
    cause = error.orig if isinstance(error, StatementError) and error.orig is not None else error
    lines = str(cause).strip().splitlines()
    message = lines[0] if lines else ""
    if len(message) > REASON_LIMIT:
        message = message[:REASON_LIMIT] + "…"
    shown = f"{type(cause).__name__}: {message}" if message else type(cause).__name__
    return f"the store refused it: {shown}"
