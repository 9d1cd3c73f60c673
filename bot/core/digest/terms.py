"""Matching by terms, not by filter: one window's reports, each distinct term asked once.

A tick plans thousands of destinations over the same window of reports, and their filters
share most of their terms (`tag:rollout`, `repo:verl`, `impact>=high`…). `WindowTerms` holds
the window's reports by position and answers each term once, as the set of positions whose
report it holds for: a Python int used as a bitset (bit i is report i). A filter then costs a
few AND/OR/NOT operations on those ints, whatever the size of the window.

What it keeps is exactly what `Plan.keep` keeps (`select_new`), in the same order:

- the Plan's repo and tag lookups read the same folded values (`StoredReport.repo_key`,
  `tag_set`), gathered once into an inverted index;
- every other term (the Plan's `rest`) is a leaf of the query evaluated by
  `bot.core.query.matches` (the reference evaluator) on each report once, and the query's
  AND/OR/NOT become &, |, and "every report but".

tests/core/digest/test_terms.py checks both against `matches` and `select_new` on generated
queries and reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Generic

from bot.core.digest.filter_query import ItemT, Plan
from bot.core.query import And, Not, Or, Query, matches


class WindowTerms(Generic[ItemT]):
    """The reports of one window at one moment (`now`: time terms count back from it), each
    term's reports as a bitset, worked out on first use."""

    def __init__(self, items: Sequence[ItemT], now: datetime) -> None:
        self.items = items
        self.now = now
        self.every = (1 << len(items)) - 1
        self._leaves: dict[Query, int] = {}
        self._after: dict[int, int] = {}  # watermark: the reports past it
        self._chosen: dict[int, list[ItemT]] = {}  # a bitset: its reports in ingest order
        tags: dict[str, int] = {}
        full: dict[str, int] = {}
        names: dict[str, int] = {}
        for position, item in enumerate(items):
            bit = 1 << position
            for tag in item.tag_set:
                tags[tag] = tags.get(tag, 0) | bit
            owner_name, name = item.repo_key
            full[owner_name] = full.get(owner_name, 0) | bit
            names[name] = names.get(name, 0) | bit
        self._tags, self._full, self._names = tags, full, names

    def keep(self, plan: Plan, watermark: int) -> list[ItemT]:
        """What `plan.keep(items, watermark, now)` keeps, sorted by seq as `select_new` sorts
        it. Filters that keep the same reports share one list: it must not be changed."""
        bits = self.bits(plan, watermark)
        found = self._chosen.get(bits)
        if found is None:
            found = [self.items[position] for position in positions(bits)]
            found.sort(key=lambda item: item.seq)
            self._chosen[bits] = found
        return found

    def bits(self, plan: Plan, watermark: int) -> int:
        """The positions of the reports `plan` keeps past `watermark`."""
        bits = self._after_bits(watermark)
        if bits and plan.repos is not None:
            wanted = _union(self._full, plan.repos) | _union(self._names, plan.repo_names)
            bits &= wanted
        if bits and plan.any_tags is not None:
            bits &= _union(self._tags, plan.any_tags)
        if bits and plan.no_tags:
            bits &= ~_union(self._tags, plan.no_tags)
        if bits and plan.rest is not None:
            bits &= self.query_bits(plan.rest)
        return bits

    def query_bits(self, query: Query) -> int:
        """The positions of the reports `query` matches (`matches`, a term at a time)."""
        if isinstance(query, Not):
            return self.every & ~self.query_bits(query.item)
        if isinstance(query, And):
            bits = self.every
            for item in query.items:
                bits &= self.query_bits(item)
            return bits
        if isinstance(query, Or):
            bits = 0
            for item in query.items:
                bits |= self.query_bits(item)
            return bits
        found = self._leaves.get(query)
        if found is None:
            found = self._leaves[query] = self._leaf(query)
        return found

    def _leaf(self, query: Query) -> int:
        bits = 0
        for position, item in enumerate(self.items):
            if matches(query, item.prepared, now=self.now):
                bits |= 1 << position
        return bits

    def _after_bits(self, watermark: int) -> int:
        found = self._after.get(watermark)
        if found is None:
            found = 0
            for position, item in enumerate(self.items):
                if item.seq > watermark:
                    found |= 1 << position
            self._after[watermark] = found
        return found


def _union(index: dict[str, int], values: frozenset[str]) -> int:
    bits = 0
    for value in values:
        bits |= index.get(value, 0)
    return bits


def positions(bits: int) -> list[int]:
    """The positions of the set bits of `bits` (not negative), lowest first."""
    found = []
    while bits:
        low = bits & -bits
        found.append(low.bit_length() - 1)
        bits ^= low
    return found
