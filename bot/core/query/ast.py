"""A parsed query: small frozen dataclasses, shared by the evaluator, the index and the chats.

`tag:rollout -tag:ci (权重 OR "weight sync")` is
`And((Field("tag", ":", "rollout"), Not(Field("tag", ":", "ci")),
Or((Text("权重"), Text("weight sync", phrase=True)))))`.

A Field's value is canonical (checked by the parser): a tag, repo or risk lowercased, a level
name (`impact` low/medium/high, `rec` skip/skim/read/must_read), a PR number or range
`7400..7500` (either end may be empty), a date `2026-11-01` or an age `7d` / `2w` / `12h`.
A Text's value is already normalized (text.normalize_text): what a document must contain.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from bot.core.query.fields import FIELD_TABLE

# Field names in the order the help and the "did you mean" hint list them (fields.py's table).
FIELDS: Final = tuple(spec.name for spec in FIELD_TABLE)
# Comparison operators (every field takes `:`; an ordered one, FieldSpec.ordered, these too).
COMPARISONS: Final = (">=", "<=", ">", "<")


@dataclass(frozen=True, slots=True)
class Field:
    """`name op value`: `tag:rollout`, `impact>=medium`, `number:7400..7500` (`#7422` too)."""

    name: str
    op: str
    value: str


@dataclass(frozen=True, slots=True)
class Text:
    """A bare word (`权重`), a quoted phrase (`"weight sync"`) or a word's start (`roll*`,
    `prefix`), normalized; found where text.contains finds it (whole Latin words)."""

    value: str
    phrase: bool = False
    prefix: bool = False


@dataclass(frozen=True, slots=True)
class Not:
    item: Query


@dataclass(frozen=True, slots=True)
class And:
    items: tuple[Query, ...]


@dataclass(frozen=True, slots=True)
class Or:
    items: tuple[Query, ...]


Query = Field | Text | Not | And | Or


def unparse(query: Query) -> str:
    """The query written back as text that parses to the same query (for echoes and
    explanations): `tag:rollout -tag:ci (权重 OR "weight sync")`."""
    if isinstance(query, Field):
        value = f'"{query.value}"' if _needs_quotes(query.value) else query.value
        return f"{query.name}{query.op}{value}"
    if isinstance(query, Text):
        # a bare number reads as that PR too (`7422`: number:7422 OR 7422): the word alone
        # is written quoted, which matches as the word does
        if query.prefix:
            return f"{query.value}*"
        quoted = (
            query.phrase
            or _needs_quotes(query.value)
            or _is_number(query.value)
            or query.value.endswith("*")  # bare, it would ask a word's start
        )
        return f'"{query.value}"' if quoted else query.value
    if isinstance(query, Not):
        inner = unparse(query.item)
        grouped = isinstance(query.item, And | Or) and not is_bare_number(query.item)
        return f"-({inner})" if grouped else f"-{inner}"
    if isinstance(query, And):
        return " ".join(
            f"({unparse(item)})"
            if isinstance(item, Or) and not is_bare_number(item)
            else unparse(item)
            for item in query.items
        )
    if is_bare_number(query):
        return query.items[1].value  # type: ignore[union-attr]
    return " OR ".join(unparse(item) for item in query.items)


def fields_of(query: Query) -> Iterator[Field]:
    """Every field term of `query`, however deep (under NOT too)."""
    if isinstance(query, Field):
        yield query
    elif isinstance(query, Not):
        yield from fields_of(query.item)
    elif isinstance(query, And | Or):
        for item in query.items:
            yield from fields_of(item)


def _is_number(value: str) -> bool:
    return value.isascii() and value.isdigit()


def is_bare_number(query: Query) -> bool:
    """`number:7422 OR 7422`, what the parser reads a bare `7422` as (written back as `7422`,
    one term: not flattened into an OR around it, not parenthesized)."""
    if not isinstance(query, Or) or len(query.items) != 2:
        return False
    number, word = query.items
    return (
        isinstance(number, Field)
        and number.name == "number"
        and number.op == ":"
        and isinstance(word, Text)
        and not word.phrase
        and word.value == number.value
    )


def _needs_quotes(value: str) -> bool:
    return (
        not value
        or value in ("OR", "AND", "NOT")
        or value[0] in "-#"
        or any(ch.isspace() or ch in '()"' for ch in value)
        or ":" in value
        or any(op in value for op in COMPARISONS)
    )
