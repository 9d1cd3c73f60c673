"""Statements over many rows or values at once: one parameter per list, one per column.

A tick at 100,000 subscriptions plans 1,000 destinations per transaction. Built the ordinary
way, an `in_(list)` is coerced value by value and sent as one placeholder each (each list
length a new statement text for the driver to parse), and an executemany binds every row
through SQLAlchemy's per-row machinery (and on PostgreSQL runs one statement per row). Here a
list travels as one value: on PostgreSQL an array's text typed by its cast (`$1::INTEGER[]`,
for `= ANY` and `unnest`; the driver would dump a Python list element by element), on SQLite
a JSON array unpacked by `json_each` (a batch of rows: one JSON array of rows). On SQLite the
values go through their column type's bind processing first, so a datetime is stored and
compared exactly as SQLAlchemy writes it. The statements are cached like any other: the
values are bound parameters, not part of the SQL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from types import NoneType
from typing import Any

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Select,
    Table,
    TypeDecorator,
    bindparam,
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

from bot.core.store.sql.db import dialect_insert, json_text


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
        return json_text([bound(item) for item in value])


_INTEGERS, _FLAGS, _TEXTS = frozenset({int, NoneType}), frozenset({bool}), frozenset({str})


def _array_literal(values: Sequence[Any]) -> str:
    """PostgreSQL's text form of an array: integers and flags as they are, NULL for None,
    anything else quoted. The usual columns (ids, counts, repos and tags, flags, a nullable
    id) take one pass in C to learn their types and one join; the rest goes value by value."""
    kinds = set(map(type, values))
    if kinds <= _INTEGERS:
        if NoneType in kinds:
            texts = ["NULL" if value is None else str(value) for value in values]
            return "{" + ",".join(texts) + "}"
        return "{" + ",".join(map(str, values)) + "}"
    if kinds == _FLAGS:
        return "{" + ",".join(["t" if value else "f" for value in values]) + "}"
    if kinds == _TEXTS:  # (repos, tags: no quote or backslash)
        plain = "".join(values)
        if '"' not in plain and "\\" not in plain:
            return '{"' + '","'.join(values) + '"}'
    return "{" + ",".join(map(_array_element, values)) + "}"


def _array_element(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "t" if value else "f"
    text = value.isoformat() if isinstance(value, datetime) else str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Listing(ColumnElement[Any]):
    """Values of one column type as one bound parameter (see Listed): on PostgreSQL
    `$1::INTEGER[]`, the text made an array once, when bound (a CAST of a text-typed
    parameter is an expression that a generic plan's scan would work out row by row)."""

    inherit_cache = True
    _traverse_internals = [("values", InternalTraversal.dp_clauseelement)]  # noqa: RUF012

    def __init__(self, kind: TypeEngine[Any], values: Sequence[Any], name: str = "among") -> None:
        self.type = ARRAY(kind)
        self.values = bindparam(name, list(values), type_=Listed(kind), unique=True)


@compiles(Listing)
def _listing(element: Listing, compiler: SQLCompiler, **kw: Any) -> str:
    return str(compiler.process(element.values, **kw))


@compiles(Listing, "postgresql")
def _listing_typed(element: Listing, compiler: SQLCompiler, **kw: Any) -> str:
    array_type = compiler.dialect.type_compiler_instance.process(element.type)
    return f"{compiler.process(element.values, **kw)}::{array_type}"


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
        self.values = Listing(column.type, list(values))


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
    column = compiler.process(element.column, **kw)
    return f"{column} = ANY({compiler.process(element.values, **kw)})"


async def insert_columns(
    conn: AsyncConnection, table: Table, columns: Mapping[str, Sequence[Any]]
) -> None:
    """Insert rows given column by column (lists of one length) in one statement. A column
    whose values are all one value is bound once; the others travel as one parameter each on
    PostgreSQL (`unnest` of typed arrays), as one JSON array of rows on SQLite (`json_each`)."""
    count = len(next(iter(columns.values()), ()))
    if not count:
        return
    same = {n: v[0] for n, v in columns.items() if v.count(v[0]) == count}
    varying = {n: v for n, v in columns.items() if n not in same}
    if not varying:  # one row, or rows alike (the unique keys decide)
        varying = {n: [v] * count for n, v in same.items()}
        same = {}
    constants = [bindparam(f"same_{n}", v, type_=table.c[n].type).label(n) for n, v in same.items()]
    typed = {name: (table.c[name].type, values) for name, values in varying.items()}
    rows = rows_of(conn.dialect, typed).add_columns(*constants)
    await conn.execute(table.insert().from_select([*varying, *same], rows))


def rows_of(
    dialect: Dialect, columns: Mapping[str, tuple[TypeEngine[Any], Sequence[Any]]]
) -> Select[Any]:
    """Rows given column by column (lists of one length, each with the type its values are
    bound as), selected as columns of those names: one parameter per column on PostgreSQL
    (`unnest` of typed arrays), one JSON array of rows on SQLite (`json_each`, each value
    bound by its type first, so a datetime compares as its column stores it)."""
    if dialect.name == "postgresql":
        arrays = [Listing(kind, values, f"rows_{n}") for n, (kind, values) in columns.items()]
        source = func.unnest(*arrays).table_valued(*columns).render_derived(name="rows")
        return select(*source.c)
    packed = []  # most columns need no bind processing (integers, text)
    for kind, values in columns.values():
        if kind.dialect_impl(dialect).bind_processor(dialect) is not None:
            values = list(map(_bound(kind, dialect), values))
        packed.append(values)
    each: ColumnElement[Any] = literal_column("value")
    picks = [func.json_extract(each, f"$[{i}]").label(n) for i, n in enumerate(columns)]
    rows: BindParameter[Any] = bindparam("rows", json_text(list(zip(*packed, strict=True))))
    return select(*picks).select_from(func.json_each(rows))


async def insert_ignore_many(
    conn: AsyncConnection, table: Table, rows: Sequence[dict[str, Any]]
) -> None:
    """Insert the rows whose unique key is free, in one statement per batch of rows."""
    if rows:
        await conn.execute(dialect_insert(conn, table).on_conflict_do_nothing(), list(rows))


async def lock_rows(
    conn: AsyncConnection, id_column: ColumnElement[Any], ids: Sequence[Any]
) -> None:
    """Lock the rows whose `id_column` is among `ids`, in id order (replicas may wait, never
    deadlock), where the database locks rows: PostgreSQL. SQLite's one writer needs none."""
    if conn.dialect.name != "postgresql":
        return
    lock = select(id_column).where(among(id_column, ids)).order_by(id_column)
    await conn.execute(lock.with_for_update())
