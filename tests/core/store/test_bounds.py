"""The bounds a check reads from a column's type: PostgreSQL's, the stricter store's."""

from __future__ import annotations

import pytest
from sqlalchemy import BigInteger, Column, Integer, SmallInteger, String, Text

from bot.core.store.bounds import int_range, max_chars, max_int
from bot.core.store.sql.tables import subscriptions


def test_integer_columns_hold_what_postgresql_holds() -> None:
    assert int_range(Column("a", SmallInteger)) == (-(2**15), 2**15 - 1)
    assert int_range(Column("b", Integer)) == (-(2**31), 2**31 - 1)
    assert int_range(Column("c", BigInteger)) == (-(2**63), 2**63 - 1)
    assert max_int(subscriptions.c.number) == 2**31 - 1


def test_text_columns_hold_their_length_and_unbounded_ones_are_refused() -> None:
    assert max_chars(Column("a", String(128))) == 128
    with pytest.raises(TypeError):
        max_chars(Column("b", Text))
    with pytest.raises(TypeError):
        int_range(Column("c", String(8)))
