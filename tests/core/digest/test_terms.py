"""Matching by terms (bot/core/digest/terms.py) agrees with the reference evaluator.

A window's reports as bitsets, each term asked once, a query as set operations: generated
queries and reports must pick exactly what `bot.core.query.matches` picks, and a filter exactly
what `select_new` picks (the same reports, the same order), at any watermark.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.digest.select import DigestFilter, StoredReport, select_new
from bot.core.digest.terms import WindowTerms, positions
from bot.core.query import And, Field, Not, Or, Query, Text, matches, unparse
from bot.core.query.evaluate import Prepared
from bot.core.reports.model import ImpactLevel, KeyFile, RecommendationLevel, Report

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
REPOS = ["verl-project/verl", "sgl-project/sglang", "vllm-project/vllm", "other/verl"]
TAGS = ["rollout", "sglang", "ci", "docs", "perf", "weight sync", "fsdp"]
WORDS = ["权重", "weight", "显存", "cache", "sync"]
FILES = ["verl/trainer/main.py", "docs/index.md", "sglang/srt/cache.py"]


@st.composite
def reports(draw: st.DrawFn) -> Report:
    tags = draw(st.lists(st.sampled_from(TAGS), max_size=3, unique=True))
    days = draw(st.none() | st.integers(0, 30))
    return Report(
        repo=draw(st.sampled_from(REPOS)),
        number=draw(st.integers(1, 9000)),
        title=f"PR {draw(st.sampled_from(WORDS))}",
        summary=draw(st.sampled_from(["", *WORDS, "weight sync 权重"])),
        merged_at=None if days is None else NOW - timedelta(days=days, hours=3),
        impact_level=draw(st.none() | st.sampled_from(list(ImpactLevel))),
        recommendation_level=draw(st.sampled_from(list(RecommendationLevel))),
        risk_flags=draw(st.lists(st.sampled_from(["FP8 例外", "显存上涨", "race"]), max_size=2)),
        tags=[tag.upper() if draw(st.booleans()) else tag for tag in tags],
        key_files=[
            KeyFile(path=path)
            for path in draw(st.lists(st.sampled_from(FILES), max_size=2, unique=True))
        ],
    )


def _windows(found: list[Report]) -> list[StoredReport]:
    return [StoredReport(report, seq=seq) for seq, report in enumerate(found, start=1)]


windows = st.lists(reports(), max_size=40).map(_windows)

LEAVES: st.SearchStrategy[Query] = st.one_of(
    st.builds(Field, st.just("tag"), st.just(":"), st.sampled_from([*TAGS, "other"])),
    st.builds(Field, st.just("repo"), st.just(":"), st.sampled_from([*REPOS, "verl", "sglang"])),
    st.builds(
        Field,
        st.just("impact"),
        st.sampled_from([":", ">=", "<", ">"]),
        st.sampled_from(["low", "medium", "high"]),
    ),
    st.builds(Field, st.just("rec"), st.sampled_from([":", ">="]), st.sampled_from(["read"])),
    st.builds(Field, st.just("risk"), st.just(":"), st.sampled_from(["*", "fp8", "显存"])),
    st.builds(Field, st.sampled_from(["since", "before"]), st.just(":"), st.sampled_from(["7d"])),
    st.builds(Field, st.just("number"), st.just(":"), st.sampled_from(["1..4000", "..5000"])),
    st.builds(Field, st.just("file"), st.just(":"), st.sampled_from(["*.py", "docs/", "verl/"])),
    st.builds(Text, st.sampled_from(WORDS), st.booleans()),
)


def _extend(children: st.SearchStrategy[Query]) -> st.SearchStrategy[Query]:
    several = st.lists(children, min_size=1, max_size=4).map(tuple)
    return st.one_of(
        st.builds(Not, children), several.map(And), several.map(Or)
    )  # fmt: skip


queries = st.recursive(LEAVES, _extend, max_leaves=12)


@pytest.mark.slow  # 300 generated windows and queries: CI runs it (SLOW=1)
@settings(max_examples=300, deadline=None)
@given(items=windows, query=queries)
def test_a_query_as_set_operations_matches_what_the_evaluator_matches(
    items: list[StoredReport], query: Query
) -> None:
    terms = WindowTerms(items, NOW)
    expected = [i for i, item in enumerate(items) if matches(query, item.report, now=NOW)]
    assert positions(terms.query_bits(query)) == expected, unparse(query)


filters = st.builds(
    DigestFilter,
    repos=st.lists(st.sampled_from([*REPOS, "verl"]), max_size=2, unique=True).map(tuple),
    tags=st.lists(st.sampled_from(TAGS), max_size=3, unique=True).map(tuple),
    exclude_tags=st.lists(st.sampled_from(TAGS), max_size=2, unique=True).map(tuple),
    max_items=st.just(30),
    query=st.none().map(lambda _: "") | queries.map(unparse),
)


@pytest.mark.slow  # 300 generated windows and filters: CI runs it (SLOW=1)
@settings(max_examples=300, deadline=None)
@given(items=windows, chosen=st.lists(filters, min_size=1, max_size=4), mark=st.integers(0, 40))
def test_a_filter_by_terms_picks_what_select_new_picks(
    items: list[StoredReport], chosen: list[DigestFilter], mark: int
) -> None:
    terms = WindowTerms(items, NOW)  # shared by the filters, as a tick shares it
    for flt in chosen:
        expected = select_new(items, flt, mark, NOW)
        found = terms.keep(flt.plan, mark)
        assert found == expected, flt
        assert all(a is b for a, b in zip(found, expected, strict=True))


def test_time_terms_count_from_the_moment_the_terms_are_asked_at() -> None:
    merged = Report(repo="a/b", number=1, title="t", merged_at=NOW - timedelta(days=3))
    items = [StoredReport(merged, seq=1)]
    plan = DigestFilter(query="since:7d").plan
    assert WindowTerms(items, NOW).keep(plan, 0) == items
    assert WindowTerms(items, NOW + timedelta(days=5)).keep(plan, 0) == []


def test_each_term_is_asked_of_each_report_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import bot.core.digest.terms as terms_module

    calls: list[Query] = []
    real = terms_module.matches  # type: ignore[attr-defined]

    def counting(query: Query, report: Prepared, *, now: datetime) -> bool:
        calls.append(query)
        return real(query, report, now=now)

    monkeypatch.setattr(terms_module, "matches", counting)
    items = _windows([Report(repo="a/b", number=n, title="权重", summary="") for n in range(1, 6)])
    terms = WindowTerms(items, NOW)
    for number in range(50):
        flt = DigestFilter(tags=("rollout",), query=f"权重 OR impact>=high OR word{number % 3}")
        assert terms.keep(flt.plan, 0) == []  # no report has the tag: the rest is not asked
        assert len(terms.keep(DigestFilter(query=f"权重 -word{number % 3}").plan, 0)) == 5
    assert len({*calls}) == 4  # 权重 and word0..word2
    assert len(calls) == len(items) * 4


def test_filters_that_pick_the_same_reports_share_one_list() -> None:
    items = _windows([Report(repo="a/b", number=n, title="t", tags=["ci"]) for n in range(1, 4)])
    terms = WindowTerms(items, NOW)
    first = terms.keep(DigestFilter(tags=("ci",)).plan, 0)
    assert terms.keep(DigestFilter(repos=("a/b",)).plan, 0) is first
    assert terms.keep(DigestFilter(exclude_tags=("ci",)).plan, 0) == []
