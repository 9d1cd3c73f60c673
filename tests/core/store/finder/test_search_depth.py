"""Queries far past the parser's term cap (built as ASTs, as a config or a future caller might)
still compile to statements both databases accept: AND, OR and the rank are balanced trees.
On SQLite, 500 ANDed words were "Expression tree is too large (maximum depth 1000)"."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.chat.replay import replay
from bot.core.models import Locale, Platform
from bot.core.query import And, Field, Or, Query, Text
from bot.core.render.renderer import Renderer
from bot.core.reports.model import Report
from bot.core.store.finder.search import search
from bot.core.store.reports import ReportStore
from bot.core.timing.cadence import parse_cadence
from bot.core.timing.cron import next_fire

pytestmark = pytest.mark.slow  # hundreds of terms per query: CI runs them (SLOW=1)

NOW = datetime(2026, 12, 1, tzinfo=UTC)
MANY = 520  # past SQLite's depth of 1000 for a chain
# What is tested is the statement's depth, not its speed: a budget no loaded machine reaches.
BUDGET_SECONDS = 120.0


def _words(count: int) -> list[Query]:
    return [Text(f"word{i}x") for i in range(count)]


async def _numbers(store: ReportStore, query: Query) -> list[int]:
    result = await search(store, query, limit=10, now=NOW, seconds=BUDGET_SECONDS)
    return sorted(hit.report.number for hit in result.hits)


async def test_hundreds_of_anded_words_and_fields_are_answered(store: ReportStore) -> None:
    every = " ".join(f"word{i}x" for i in range(MANY))
    await store.upsert_many(
        [
            (Report(repo="a/b", number=1, title="t", summary=every, tags=["ci"]), ""),
            (Report(repo="a/b", number=2, title="t", summary="word1x"), ""),
        ]
    )
    assert await _numbers(store, And(tuple(_words(MANY)))) == [1]
    tags = And(tuple(Field("tag", ":", "ci") for _ in range(MANY)))
    assert await _numbers(store, tags) == [1]
    mixed = And((*_words(MANY), *(Field("number", "<=", str(9 + i)) for i in range(MANY))))
    assert await _numbers(store, mixed) == [1]


async def test_hundreds_of_ored_words_are_answered(store: ReportStore) -> None:
    await store.upsert_many([(Report(repo="a/b", number=3, title="t", summary="word519x"), "")])
    assert await _numbers(store, Or(tuple(_words(MANY)))) == [3]
    nested = Or((And(tuple(_words(MANY))), Or(tuple(_words(MANY)))))
    assert await _numbers(store, nested) == [3]


async def test_a_replay_of_hundreds_of_ored_words_is_answered(store: ReportStore) -> None:
    await store.upsert_many(
        [(Report(repo="a/b", number=4, title="t", summary="word7x", merged_at=NOW), "")]
    )
    cadence = parse_cadence("now", next_fire=next_fire, now=NOW)
    numbers = And(tuple(Field("number", "<=", str(4 + i)) for i in range(2 * MANY)))
    result = await replay(
        store,
        Or((numbers, Or(tuple(_words(MANY))))),
        cadence,
        now=NOW,
        tz="UTC",
        renderer=Renderer(),
        platform=Platform.TELEGRAM,
        locale=Locale.EN,
        seconds=BUDGET_SECONDS,
    )
    assert result.matched == 1
