"""The statements a search runs, kept by what they are built from.

Building a search's ranked statement is SQLAlchemy work in Python: a word's rank counts it in
each text field, an expression of a few dozen elements per word and field, 4 to 8 ms for a
query of one or two words on a 2-CPU machine, a third of what the search then takes. The
statement depends only on the query (its ranked terms follow from it, so they are no part of
the key), the dialect and whether it checks words row by row. A query asked again (the same
words from another chat, a person's home view opened again, which asks for the must-read PRs of
their subscriptions) runs the statement built the first time: its values (the seqs of a range,
how many rows) are bound at execution, so one statement serves every range of every walk. A
query with a time term (`since:`, `before:`) is the exception: its statement holds the moment
its ages count back from, which the next search does not share, so it is built for its own
search alone.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Final

from sqlalchemy import Select

from bot.core.query import Query
from bot.core.query.ast import fields_of
from bot.core.query.fields import Kind, field_spec

# Statements kept, the least recently used dropped first. One of a one-word query holds about
# 160 KiB, one of six words 630 KiB (SQLAlchemy's cache of compiled statements refers to it too
# while it keeps its compiled form): 64 one-word queries' hold about 10 MB.
KEPT: Final = 64

Build = Callable[[], Select[Any]]


class Statements:
    """Built statements by key, at most KEPT of them (least recently used dropped first)."""

    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self._built: OrderedDict[Hashable, Select[Any]] = OrderedDict()

    def get(self, key: Hashable, build: Build) -> Select[Any]:
        found = self._built.get(key)
        if found is not None:
            self._built.move_to_end(key)
            return found
        found = self._built[key] = build()
        if len(self._built) > self.kept:
            self._built.popitem(last=False)
        return found

    def __len__(self) -> int:
        return len(self._built)


def counts_back(query: Query) -> bool:
    """Whether a time term of `query` counts back from the moment of its search."""
    return any(field_spec(term.name).kind is Kind.TIME for term in fields_of(query))
