"""A subscription's filter as stored (JSON) and back.

Reading 100,000 subscriptions parses the distinct filters among them (a few hundred when
chats subscribe alike, tens of thousands when people write their own): each is parsed once and
its DigestFilter shared (with the query plan it compiles on first use).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from bot.core.digest.select import DigestFilter

# Distinct filters kept parsed: a tick reads its subscriptions in destination order, so a cache
# smaller than the distinct filters misses on nearly every row (10,000 filters through a
# 4,096-entry cache parsed 100,000 rows). A filter is a few hundred bytes with its plan.
FILTER_CACHE = 65_536


def filter_to_json(flt: DigestFilter) -> dict[str, Any]:
    data: dict[str, Any] = {
        "repos": list(flt.repos),
        "tags": list(flt.tags),
        "exclude_tags": list(flt.exclude_tags),
        "max_items": flt.max_items,
    }
    if flt.query:
        data["query"] = flt.query
    return data


def filter_from_json(data: dict[str, Any]) -> DigestFilter:
    return _filter(
        tuple(data.get("repos", ())),
        tuple(data.get("tags", ())),
        tuple(data.get("exclude_tags", ())),
        int(data.get("max_items", 30)),
        str(data.get("query") or ""),
    )


def stored_filter(stored: str | dict[str, Any]) -> DigestFilter:
    if isinstance(stored, str):
        return _filter_text(stored)
    return filter_from_json(dict(stored))


@functools.lru_cache(maxsize=FILTER_CACHE)
def _filter_text(stored: str) -> DigestFilter:
    return filter_from_json(json.loads(stored))


@functools.lru_cache(maxsize=FILTER_CACHE)
def _filter(
    repos: tuple[str, ...], tags: tuple[str, ...], exclude: tuple[str, ...], cap: int, query: str
) -> DigestFilter:
    """One filter object per distinct filter: subscriptions that share an audience share it
    (and its compiled query)."""
    return DigestFilter(repos, tags, exclude, cap, query)
