"""Statements over many rows or values at once, one parameter per list or per batch of rows.

A tick at 100,000 subscriptions plans 500 destinations per transaction. Built the ordinary way,
an `in_(list)` is coerced value by value and sent as one placeholder each (each list length a
new statement text for the driver to parse), and an executemany binds every row through
SQLAlchemy's per-row machinery (and on PostgreSQL runs one statement per row). Here a list
travels as one value (a PostgreSQL array for `= ANY`, a JSON array that SQLite unpacks with
`json_each`), and a batch of rows as one JSON text (`json_to_recordset`, `json_each`). On
SQLite the values go through their column type's bind processing first, so a datetime is
stored and compared exactly as SQLAlchemy writes it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    ColumnElement,
    Select,
    Table,
    Text,
    TypeDecorator,
    bindparam,
    cast,
    column,
    func,
    literal_column,
    select,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.sqltypes import NullType
from sqlalchemy.sql.visitors import InternalTraversal
from sqlalchemy.types import TypeEngine

from bot.core.store.db import dialect_insert


class Listed(TypeDecorator[Sequence[Any]]):
    """Values of one column type bound as one text parameter: a PostgreSQL array literal
    (`{1,2,3}`, cast to the column's array type where it is used), or on SQLite a JSON array
    of the values as the column type binds them. (Text, not a list: the driver would dump a
    list element by element in Python.)"""

    impl = NullType  # the driver's own type for text (PostgreSQL: unknown, then the cast's)
    cache_ok = True

    def __init__(self, item: TypeEngine[Any]) -> None:
        super().__init__()
        self.item = item

    def process_bind_param(self, value: Sequence[Any] | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if dialect.name == "postgresql":
            return _array_literal(value)
        bound = _bound(self.item, dialect)
        return json.dumps([bound(item) for item in value])


def _array_literal(values: Sequence[Any]) -> str:
    """PostgreSQL's text form of an array: integers as they are, anything else quoted."""
    if all(type(value) is int for value in values):
        return "{" + ",".join(map(str, values)) + "}"
    return "{" + ",".join(map(_array_element, values)) + "}"


def _array_element(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "t" if value else "f"
    text = value.isoformat() if isinstance(value, datetime) else str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Among(ColumnElement[Any]):
    """`column IN values`, bound as one parameter whatever the number of values: an array
    (`= ANY(...)`) on PostgreSQL, a JSON array unpacked by `json_each` on SQLite. The values
    are a bound parameter, so a statement is compiled once and cached like any other."""

    type: TypeEngine[Any] = NullType()  # no `= 1` around it where booleans are integers (SQLite)
    inherit_cache = True
    _traverse_internals = [  # noqa: RUF012 (SQLAlchemy reads it from the class)
        ("column", InternalTraversal.dp_clauseelement),
        ("values", InternalTraversal.dp_clauseelement),
    ]

    def __init__(self, column: ColumnElement[Any], values: Iterable[Any]) -> None:
        self.column = column
        self.values = bindparam("among", list(values), type_=Listed(column.type), unique=True)


def among(column: ColumnElement[Any], values: Iterable[Any]) -> Among:
    return Among(column, values)


@compiles(Among)
def _among_in(element: Among, compiler: SQLCompiler, **kw: Any) -> str:
    """Other dialects (a statement printed, not run): `column IN (:among)`."""
    return f"{compiler.process(element.column, **kw)} IN ({compiler.process(element.values, **kw)})"


@compiles(Among, "sqlite")
def _among_json(element: Among, compiler: SQLCompiler, **kw: Any) -> str:
    unpacked: Select[Any] = select(literal_column("value")).select_from(
        func.json_each(element.values)
    )
    return str(compiler.process(element.column.in_(unpacked), **kw))


def _bound(kind: TypeEngine[Any], dialect: Dialect) -> Callable[[Any], Any]:
    """The column type's bind processing (a datetime to SQLAlchemy's stored text), memoised
    per value: a batch's rows share a few times and flags."""
    processor = kind.dialect_impl(dialect).bind_processor(dialect)
    if processor is None:
        return lambda value: value
    seen: dict[Any, Any] = {}

    def bound(value: Any) -> Any:
        if value not in seen:
            seen[value] = processor(value)
        return seen[value]

    return bound


@compiles(Among, "postgresql")
def _among_any(element: Among, compiler: SQLCompiler, **kw: Any) -> str:
    # `$1::INTEGER[]`: the text becomes the array once, when bound (a CAST of a text-typed
    # parameter is an expression that a generic plan's scan would work out row by row).
    array_type = compiler.dialect.type_compiler_instance.process(ARRAY(element.column.type))
    column = compiler.process(element.column, **kw)
    return f"{column} = ANY({compiler.process(element.values, **kw)}::{array_type})"


async def insert_rows(conn: AsyncConnection, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert many rows (all with the same keys) in one statement, the rows sent as one JSON
    text: unpacked by `json_to_recordset` on PostgreSQL, `json_each` on SQLite. (JSON, not an
    array per column: the driver dumps an array element by element in Python.)"""
    if not rows:
        return
    names = list(rows[0])
    if conn.dialect.name == "postgresql":
        packed = json.dumps(rows, default=_json_value)
        typed = [column(name, table.c[name].type) for name in names]
        found = func.json_to_recordset(cast(bindparam("rows", packed, type_=Text), JSON))
        source = found.table_valued(*typed).render_derived(name="rows", with_types=True)
        await conn.execute(table.insert().from_select(names, select(*source.c)))
        return
    columns = []  # column by column: most need no bind processing (integers, text)
    for name in names:
        values = [row[name] for row in rows]
        kind = table.c[name].type
        if kind.dialect_impl(conn.dialect).bind_processor(conn.dialect) is not None:
            values = list(map(_bound(kind, conn.dialect), values))
        columns.append(values)
    packed = json.dumps(list(zip(*columns, strict=True)))
    each: ColumnElement[Any] = literal_column("value")
    picks = [func.json_extract(each, f"$[{i}]") for i in range(len(names))]
    unpacked: Select[Any] = select(*picks).select_from(func.json_each(bindparam("rows", packed)))
    await conn.execute(table.insert().from_select(names, unpacked))


def _json_value(value: Any) -> Any:
    """A value JSON has no type for, as PostgreSQL reads it: a time in ISO 8601."""
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} cannot go into a JSON row")


async def insert_ignore_many(
    conn: AsyncConnection, table: Table, rows: Sequence[dict[str, Any]]
) -> None:
    """Insert the rows whose unique key is free, in one statement per batch of rows."""
    if rows:
        await conn.execute(dialect_insert(conn, table).on_conflict_do_nothing(), list(rows))
