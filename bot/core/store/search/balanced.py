"""AND, OR and sums of many parts as balanced trees: depth log n, not n.

SQLite parses `a AND b AND c …` into a chain as deep as it is long and refuses a statement
whose expression tree is deeper than 1000 ("Expression tree is too large"). SQLAlchemy writes
`and_(and_(a, b), and_(c, d))` flat again, so each half is wrapped in parentheses it keeps
(`Nested`): `(a AND b) AND (c AND d)` is parsed two levels deep, whatever its length.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from sqlalchemy import ColumnElement, and_, or_
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.visitors import InternalTraversal, _TraverseInternalsType

FLAT: Final = 8  # parts written side by side before the list is split in two


class Nested(ColumnElement[Any]):
    """`(element)`, kept as one operand: never merged into the AND, OR or `+` around it."""

    inherit_cache = True
    # SQLAlchemy's cache key: the wrapped element (a list, as SQLAlchemy declares it).
    _traverse_internals: _TraverseInternalsType = [  # noqa: RUF012
        ("element", InternalTraversal.dp_clauseelement)
    ]

    def __init__(self, element: ColumnElement[Any]) -> None:
        self.element = element
        self.type = element.type

    def self_group(self, against: Any = None) -> ColumnElement[Any]:
        return self


@compiles(Nested)
def _nested(element: Nested, compiler: SQLCompiler, **kw: Any) -> str:
    return "(" + compiler.process(element.element, **kw) + ")"


def _balanced(
    parts: Sequence[ColumnElement[Any]],
    join: Callable[[ColumnElement[Any], ColumnElement[Any]], ColumnElement[Any]],
    flat: Callable[..., ColumnElement[Any]],
) -> ColumnElement[Any]:
    if len(parts) <= FLAT:
        return flat(*parts)
    middle = len(parts) // 2
    left = _balanced(parts[:middle], join, flat)
    right = _balanced(parts[middle:], join, flat)
    return join(Nested(left), Nested(right))


def all_of(parts: Sequence[ColumnElement[bool]]) -> ColumnElement[bool]:
    """`and_(*parts)`, at most FLAT side by side at each level (at least one part)."""
    return _balanced(parts, lambda a, b: and_(a, b), and_)


def any_of(parts: Sequence[ColumnElement[bool]]) -> ColumnElement[bool]:
    """`or_(*parts)`, at most FLAT side by side at each level (at least one part)."""
    return _balanced(parts, lambda a, b: or_(a, b), or_)


def total(parts: Sequence[ColumnElement[Any]]) -> ColumnElement[Any]:
    """The sum of `parts`, at most FLAT added in a row at each level (at least one part)."""

    def add(*items: ColumnElement[Any]) -> ColumnElement[Any]:
        result = items[0]
        for item in items[1:]:
            result = result + item
        return result

    return _balanced(parts, lambda a, b: a + b, add)
