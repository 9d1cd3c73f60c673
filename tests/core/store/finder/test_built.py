"""The search's built statements (bot/core/store/finder/built.py): a query asked again runs the
statement built the first time, and a time term's statement serves its own search alone."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Select, literal, select

import bot.core.store.finder.search as search_module
from bot.core.query import parse
from bot.core.reports.model import Report
from bot.core.store.finder.built import Statements, counts_back
from bot.core.store.finder.search import search
from bot.core.store.reports import ReportStore

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def _statement(value: int) -> Callable[[], Select[Any]]:
    return lambda: select(literal(value))


def test_a_key_is_built_once_and_the_least_recently_used_goes_first() -> None:
    built = Statements(kept=2)
    first = built.get("a", _statement(1))
    assert built.get("a", _statement(2)) is first  # kept: not built again
    second = built.get("b", _statement(3))
    built.get("a", _statement(4))  # "a" is now the most recently used
    built.get("c", _statement(5))  # over the limit: "b" goes
    assert len(built) == 2
    assert built.get("a", _statement(6)) is first
    assert built.get("b", _statement(7)) is not second  # built anew
    assert len(built) == 2


@pytest.mark.parametrize(
    ("text", "timed"),
    [
        ("权重", False),
        ("tag:rollout -tag:ci impact>=medium", False),
        ("since:30d", True),
        ("rollout -(before:2026-01-01 OR 权重)", True),  # however deep, under NOT too
    ],
)
def test_only_a_time_term_counts_back_from_the_search_s_moment(text: str, timed: bool) -> None:
    assert counts_back(parse(text)) is timed


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ranked statements the searches build, by query, with a cache of their own."""
    made: list[str] = []
    build = search_module._ranked

    def counted(query: Any, *args: Any) -> Any:
        made.append(str(query))
        return build(query, *args)

    monkeypatch.setattr(search_module, "RANKED", Statements())
    monkeypatch.setattr(search_module, "_ranked", counted)
    return made


async def _numbers(store: ReportStore, text: str, now: datetime) -> list[int]:
    result = await search(store, parse(text), limit=10, now=now)
    return sorted(hit.report.number for hit in result.hits)


async def test_a_query_asked_again_runs_the_statement_built_the_first_time(
    store: ReportStore, builds: list[str]
) -> None:
    reports = [Report(repo="o/r", number=n, title=f"权重 {n}") for n in range(1, 4)]
    await store.upsert_many([(report, "") for report in reports])
    assert await _numbers(store, "权重", NOW) == [1, 2, 3]
    first = len(builds)
    assert first >= 1
    assert await _numbers(store, "权重", NOW + timedelta(hours=1)) == [1, 2, 3]
    assert len(builds) == first  # another moment, the same statement: no time term
    assert await _numbers(store, "权重 OR tag:ci", NOW) == [1, 2, 3]
    assert len(builds) > first  # another query: its own statement


async def test_a_time_term_counts_back_from_each_search_s_own_moment(
    store: ReportStore, builds: list[str]
) -> None:
    merged = NOW - timedelta(days=3)
    reports = [Report(repo="o/r", number=n, title="权重", merged_at=merged) for n in (1, 2)]
    await store.upsert_many([(report, "") for report in reports])
    assert await _numbers(store, "权重 since:7d", NOW) == [1, 2]
    assert await _numbers(store, "权重 since:7d", NOW + timedelta(days=10)) == []
    assert await _numbers(store, "权重 since:7d", NOW) == [1, 2]
    assert builds.count(str(parse("权重 since:7d"))) >= 3  # one for each search
