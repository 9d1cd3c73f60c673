"""What a store column can hold, read from its type in bot/core/store/sql/tables.py, so a check
made before a write (an import file, a button's value) cannot drift from the schema.

The bounds are PostgreSQL's, the stricter store: an INTEGER is 32-bit there (SQLite would take
a larger number that PostgreSQL then refuses, so a store moved from SQLite to PostgreSQL would
not load), a BIGINT 64-bit, a SMALLINT 16-bit, a VARCHAR(n) n characters.
"""

from __future__ import annotations

from typing import Any, Final

from sqlalchemy import BigInteger, Column, Integer, SmallInteger, String

# Most specific first: BigInteger and SmallInteger are Integers too.
_INTEGER_BITS: Final = ((BigInteger, 64), (SmallInteger, 16), (Integer, 32))


def int_range(column: Column[Any]) -> tuple[int, int]:
    """The smallest and largest integer `column` holds."""
    for kind, bits in _INTEGER_BITS:
        if isinstance(column.type, kind):
            return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    raise TypeError(f"{column} is not an integer column")


def max_int(column: Column[Any]) -> int:
    return int_range(column)[1]


def max_chars(column: Column[Any]) -> int:
    """How many characters the VARCHAR `column` holds."""
    length = getattr(column.type, "length", None)
    if not isinstance(column.type, String) or not isinstance(length, int):
        raise TypeError(f"{column} is not a column of bounded text")
    return length
