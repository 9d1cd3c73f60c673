"""A bare word that is exactly a known tag reads as that tag.

People subscribe "by tag" and write `subscribe rollout -ci` meaning the tags; the query
language reads a bare word as text (a word somewhere in the report). Where a query is saved
as a subscription, its unquoted bare words that name a known tag (one the store's reports
carry, or one the config's tag rules give) are read as `tag:WORD`, and the answer shows the
reading. A quoted word (`"rollout"`) keeps meaning the text; `search` keeps bare words as text.
"""

from __future__ import annotations

from collections.abc import Collection

from bot.core.query.ast import And, Field, Not, Or, Query, Text


def bare_words(query: Query) -> list[str]:
    """The query's unquoted bare words (normalized), each once, in order."""
    found: dict[str, None] = {}
    _collect(query, found)
    return list(found)


def _collect(query: Query, found: dict[str, None]) -> None:
    if isinstance(query, Text):
        if not (query.phrase or query.prefix) and query.value:
            found.setdefault(query.value)
    elif isinstance(query, Not):
        _collect(query.item, found)
    elif isinstance(query, And | Or):
        for item in query.items:
            _collect(item, found)


def read_known_tags(query: Query, known: Collection[str]) -> Query:
    """`query` with each unquoted bare word that is in `known` (normalized tags) as `tag:`."""
    if isinstance(query, Text):
        if not (query.phrase or query.prefix) and query.value in known:
            return Field("tag", ":", query.value)
        return query
    if isinstance(query, Not):
        return Not(read_known_tags(query.item, known))
    if isinstance(query, And):
        return And(tuple(read_known_tags(item, known) for item in query.items))
    if isinstance(query, Or):
        return Or(tuple(read_known_tags(item, known) for item in query.items))
    return query


def tag_terms(query: Query) -> list[Field]:
    """The query's `tag:` terms, in order (a NOT's too)."""
    if isinstance(query, Field):
        return [query] if query.name == "tag" else []
    if isinstance(query, Not):
        return tag_terms(query.item)
    if isinstance(query, And | Or):
        return [term for item in query.items for term in tag_terms(item)]
    return []
