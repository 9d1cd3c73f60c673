"""A channel's repos/tags/exclude_tags as one query (issue 16), and the Plan digests run.

- the conversion, table-driven: the query each filter means, as text;
- the same reports chosen as the DigestFilter before queries, over many generated filters and
  reports (the old rule is spelled out below as the reference);
- a Plan keeps what `bot.core.query.matches` keeps, for generated queries of every shape;
- a channel's `query:` is ANDed with the rest, and its time terms count from the digest's time.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.digest.filter_query import compile_plan, filter_query, plan_for
from bot.core.digest.select import DigestFilter, StoredReport, select_new
from bot.core.query import And, Field, Not, Or, Query, Text, matches, unparse
from bot.core.query.parser import MAX_TERMS
from bot.core.query.text import TEXT_FIELDS, normalize_text
from bot.core.reports.model import ImpactLevel, Report

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
REPOS = ["verl-project/verl", "sgl-project/sglang", "vllm-project/vllm", "other/verl"]
TAGS = ["rollout", "sglang", "ci", "docs", "perf", "fix", "fsdp"]
WORDS = ["权重", "weight", "显存", "cache"]


@pytest.mark.parametrize(
    ("repos", "tags", "exclude", "query", "expected"),
    [
        ((), (), (), "", None),
        (("verl-project/verl",), (), (), "", "repo:verl-project/verl"),
        (("a/x", "b/y"), (), (), "", "repo:a/x OR repo:b/y"),
        ((), ("rollout",), (), "", "tag:rollout"),
        ((), ("rollout", "sglang"), ("ci",), "", "(tag:rollout OR tag:sglang) -tag:ci"),
        ((), (), ("ci", "docs"), "", "-tag:ci -tag:docs"),
        (
            ("verl-project/verl", "sgl-project/sglang"),
            ("Rollout",),
            ("CI",),
            "",
            "(repo:verl-project/verl OR repo:sgl-project/sglang) tag:rollout -tag:ci",
        ),
        ((), ("rollout", "rollout"), (), "", "tag:rollout"),
        ((), (), (), "risk:FP8 权重", "risk:fp8 权重"),
        ((), ("rollout",), (), "risk:* OR impact>=high", "tag:rollout (risk:* OR impact>=high)"),
        (("verl",), (), ("ci",), "-tag:docs", "repo:verl -tag:ci -tag:docs"),
    ],
)
def test_a_filter_becomes_one_query(
    repos: tuple[str, ...],
    tags: tuple[str, ...],
    exclude: tuple[str, ...],
    query: str,
    expected: str | None,
) -> None:
    converted = filter_query(repos, tags, exclude, query)
    assert (None if converted is None else unparse(converted)) == expected
    assert DigestFilter(repos, tags, exclude, query=query).query_ast == converted


def _report(rng: random.Random, number: int) -> StoredReport:
    report = Report(
        repo=rng.choice(REPOS),
        number=number,
        title=f"PR {number} {rng.choice(WORDS)}",
        summary=rng.choice(["", *WORDS]),
        merged_at=rng.choice([None, NOW - timedelta(days=rng.randint(0, 20))]),
        impact_level=rng.choice([None, *ImpactLevel]),
        risk_flags=rng.sample(["FP8 例外", "显存上涨", "race"], rng.randint(0, 2)),
        tags=[rng.choice([t, t.upper()]) for t in rng.sample(TAGS, rng.randint(0, 3))],
    )
    return StoredReport(report, seq=number)


def _old_rule(
    item: StoredReport, repos: Sequence[str], tags: Sequence[str], exclude: Sequence[str]
) -> bool:
    """DigestFilter before queries: repo listed (or none), a wanted tag (or none), no excluded
    tag; tags case-insensitive."""
    own = {tag.lower() for tag in item.report.tags}
    return (
        (not repos or item.report.repo in repos)
        and (not tags or bool(own & {t.lower() for t in tags}))
        and not own & {t.lower() for t in exclude}
    )


def _some(rng: random.Random, values: Sequence[str], most: int) -> tuple[str, ...]:
    return tuple(rng.sample(values, rng.randint(0, most)))


def test_the_converted_filters_choose_what_the_old_filter_chose() -> None:
    rng = random.Random(16)
    items = [_report(rng, n) for n in range(1, 121)]
    for _ in range(400):
        repos, tags, exclude = _some(rng, REPOS, 2), _some(rng, TAGS, 3), _some(rng, TAGS, 2)
        flt = DigestFilter(repos, tags, exclude)
        watermark = rng.randint(0, 40)
        expected = [i for i in items if i.seq > watermark and _old_rule(i, repos, tags, exclude)]
        assert select_new(items, flt, watermark, NOW) == expected, (repos, tags, exclude)
        query = filter_query(repos, tags, exclude)
        by_query = [i for i in items if query is None or matches(query, i.report, now=NOW)]
        assert [i for i in by_query if i.seq > watermark] == expected
        assert plan_for(repos, tags, exclude) == compile_plan(query)


def _random_query(rng: random.Random, depth: int = 0) -> Query:
    leaves: list[Query] = [
        Field("tag", ":", rng.choice(TAGS)),
        Field("repo", ":", rng.choice([*REPOS, "verl", "sglang"])),
        Field("impact", rng.choice([":", ">="]), rng.choice(["low", "medium", "high"])),
        Field("risk", ":", rng.choice(["*", "fp8", "显存"])),
        Field("since", ":", rng.choice(["7d", "2w"])),
        Text(rng.choice(WORDS)),
    ]
    if depth >= 2 or rng.random() < 0.4:
        return rng.choice(leaves)
    kind = rng.choice(["and", "or", "not", "tags"])
    if kind == "not":
        return Not(_random_query(rng, depth + 1))
    if kind == "tags":  # the shapes a Plan turns into set lookups
        field = rng.choice(["tag", "repo"])
        values = rng.sample(TAGS if field == "tag" else REPOS, rng.randint(1, 3))
        terms = tuple(Field(field, ":", value) for value in values)
        return Or(terms) if len(terms) > 1 else terms[0]
    items = tuple(_random_query(rng, depth + 1) for _ in range(rng.randint(2, 4)))
    return And(items) if kind == "and" else Or(items)


def test_a_plan_keeps_what_matches_keeps() -> None:
    rng = random.Random(1616)
    items = [_report(rng, n) for n in range(1, 81)]
    for _ in range(500):
        query = _random_query(rng)
        kept = compile_plan(query).keep(items, 0, NOW)
        assert kept == [i for i in items if matches(query, i.report, now=NOW)], unparse(query)


def test_a_plan_looks_up_repos_and_tags_and_leaves_the_rest_to_matches() -> None:
    query = filter_query(["verl-project/verl", "sglang"], ["rollout"], ["ci"], "-tag:docs 权重")
    plan = compile_plan(query)
    assert plan.repos == frozenset({"verl-project/verl"})
    assert plan.repo_names == frozenset({"sglang"})
    assert plan.any_tags == frozenset({"rollout"})
    assert plan.no_tags == frozenset({"ci", "docs"})
    assert plan.rest == Text("权重")


def test_tags_and_repos_compare_as_the_query_language_does() -> None:
    """Folded like `tag:`/`repo:` terms: case-insensitive, inner spaces as one; a repo
    without an owner is the name after the slash (the same name under any owner)."""
    item = StoredReport(
        Report(repo="Verl-Project/verl", number=1, title="t", tags=["Weight  Sync"]), seq=1
    )
    other = StoredReport(Report(repo="fork/verl", number=2, title="t"), seq=2)
    assert select_new([item], DigestFilter(tags=("weight sync",)), 0, NOW) == [item]
    assert select_new([item], DigestFilter(repos=("verl-project/verl",)), 0, NOW) == [item]
    assert select_new([item, other], DigestFilter(repos=("verl",)), 0, NOW) == [item, other]
    assert select_new([item], DigestFilter(exclude_tags=("WEIGHT SYNC",)), 0, NOW) == []


def test_a_channel_query_is_anded_with_its_tags() -> None:
    def make(number: int, tags: list[str], summary: str) -> StoredReport:
        report = Report(repo="verl-project/verl", number=number, title="t", summary=summary)
        return StoredReport(report.model_copy(update={"tags": tags}), seq=number)

    items = [
        make(1, ["rollout"], "权重同步"),
        make(2, ["rollout"], "显存"),
        make(3, ["docs"], "权重"),
        make(4, ["rollout", "ci"], "权重"),
    ]
    flt = DigestFilter(tags=("rollout",), exclude_tags=("ci",), query="权重")
    assert [i.seq for i in select_new(items, flt, 0, NOW)] == [1]
    assert [i.seq for i in select_new(items, DigestFilter(query="权重 OR 显存"), 0, NOW)] == [
        1,
        2,
        3,
        4,
    ]


def test_time_terms_in_a_channel_query_count_from_the_digest_time() -> None:
    def merged(number: int, days_before: int | None) -> StoredReport:
        when = None if days_before is None else NOW - timedelta(days=days_before)
        return StoredReport(Report(repo="a/b", number=number, title="t", merged_at=when), number)

    items = [merged(1, 2), merged(2, 10), merged(3, None)]
    flt = DigestFilter(query="since:7d")
    assert [i.seq for i in select_new(items, flt, 0, NOW)] == [1]
    assert [i.seq for i in select_new(items, flt, 0, NOW + timedelta(days=6))] == []
    assert [i.seq for i in select_new(items, flt, 0, NOW - timedelta(days=5))] == [1, 2]
    unmerged_never = DigestFilter(query="before:1d")
    assert [i.seq for i in select_new(items, unmerged_never, 0, NOW)] == [1, 2]


def test_a_report_is_normalized_once_for_every_channel_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tick asks every destination's query of the same reports: their text is folded once
    (a word in 1,000 channel queries over 500 reports used to fold 4 million fields)."""
    import bot.core.query.evaluate as evaluate

    calls = 0
    real = normalize_text

    def counting(text: str) -> str:
        nonlocal calls
        calls += 1
        return real(text)

    monkeypatch.setattr(evaluate, "normalize_text", counting)
    items = [
        StoredReport(Report(repo="verl-project/verl", number=n, title="t", summary="权重"), seq=n)
        for n in range(1, 6)
    ]
    filters = [DigestFilter(query=f"权重 OR word{n}") for n in range(50)]
    for flt in filters:
        assert len(select_new(items, flt, 0, NOW)) == 5
    assert calls == len(items) * len(TEXT_FIELDS)


def test_a_stored_query_past_the_term_cap_still_filters() -> None:
    # Stored before the parser capped typed queries at MAX_TERMS: evaluated in memory, it is
    # read whole rather than refused (which would fail its destination's every digest).
    words = " OR ".join(f"tag:t{n}" for n in range(MAX_TERMS * 2)) + " OR tag:rollout"

    query = filter_query([], [], [], words)

    assert query is not None and isinstance(query, Or) and len(query.items) == MAX_TERMS * 2 + 1
