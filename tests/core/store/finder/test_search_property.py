"""Issue 16, the property test: the index-backed search answers as the brute-force evaluator.

About 150 generated reports (Chinese and Latin text in every field, tags, repos, risk flags,
key files, symbols, levels, merge times) are ingested through ReportStore in several batches
and one by one, at different clock times (so `since:`/`before:` fall back to when a report was
first seen), and a fifth of them are then updated, so the index is written and rewritten as in
production. Each random query (every term and operator, nesting depth ≤ 3) is written as text
and parsed back; `search(...)` must return exactly the reports that `matches` keeps, and count
them in `total`. Both backends (the `store` fixture). A failure names the seed and the query:
`PRDIGEST_SEARCH_SEED=N` replays another seed.
"""

from __future__ import annotations

import os
import random
from datetime import datetime, timedelta

import pytest

import bot.core.store.finder.search as search_module
from bot.core.clock import Clock
from bot.core.query import matches, parse, unparse
from bot.core.reports.model import Report
from bot.core.store.finder.search import Hit, search
from bot.core.store.reports import ReportStore
from tests.kits.queries import NOW, NUMBERS, REPOS, Pool, random_query, random_report

pytestmark = pytest.mark.slow  # thousands of generated queries: CI runs them (SLOW=1)

SEED = int(os.environ.get("PRDIGEST_SEARCH_SEED", "1616"))
REPORTS = 150
UPDATED = 30
LIMIT = 10_000
FEW = 5
Key = tuple[str, int]


def _keys(rng: random.Random, count: int) -> list[Key]:
    """Distinct (repo, number) keys; the same number in several repos, as in real stores."""
    keys: dict[Key, None] = {}
    while len(keys) < count:
        number = rng.choice([*NUMBERS, rng.randint(1, 10_000)])
        keys[(rng.choice(REPOS), number)] = None
    return list(keys)


def _fixed(moment: datetime) -> Clock:
    return lambda: moment


def _with_key(report: Report, key: Key) -> Report:
    return report.model_copy(update={"repo": key[0], "number": key[1]})


async def _ingest(
    store: ReportStore, rng: random.Random
) -> tuple[dict[Key, Report], dict[Key, datetime]]:
    """The reports as stored last, and when each was first seen (its `ingested_at`)."""
    stored: dict[Key, Report] = {}
    seen: dict[Key, datetime] = {}
    keys = _keys(rng, REPORTS)
    at = 0
    while at < len(keys):  # batches of 1 (upsert) to 40 (upsert_many), each at its own time
        size = rng.choice([1, 1, 5, 17, 40])
        clock = NOW - timedelta(days=rng.randint(0, 60), seconds=rng.randint(0, 86_399))
        writer = ReportStore(store.engine, clock=_fixed(clock))
        batch = [(_with_key(random_report(rng, 1), key), "") for key in keys[at : at + size]]
        if size == 1:
            await writer.upsert(*batch[0])
        else:
            await writer.upsert_many(batch)
        for report, _ in batch:
            stored[(report.repo, report.number)] = report
            seen[(report.repo, report.number)] = clock
        at += size
    changed = [(_with_key(random_report(rng, 1), k), "") for k in rng.sample(keys, UPDATED)]
    await ReportStore(store.engine, clock=_fixed(NOW)).upsert_many(changed)
    stored.update({(r.repo, r.number): r for r, _ in changed})
    return stored, seen


def _hit_keys(hits: list[Hit]) -> list[Key]:
    return [(hit.report.repo, hit.report.number) for hit in hits]


async def _check(store: ReportStore, queries: int, seed: int) -> None:
    rng = random.Random(seed)
    stored, seen = await _ingest(store, rng)
    pool = Pool.of(list(stored.values()), rng)
    matched = 0
    for index in range(queries):
        built = random_query(rng, pool)
        text = unparse(built)
        query = parse(text)
        expected = {k for k, r in stored.items() if matches(query, r, seen_at=seen[k], now=NOW)}
        where = f"seed {seed}, query {index}: {text!r}"
        from_ast = {k for k, r in stored.items() if matches(built, r, seen_at=seen[k], now=NOW)}
        assert from_ast == expected, f"{where} means another query once parsed back"
        result = await search(store, query, limit=LIMIT, now=NOW, seconds=NO_BUDGET)
        found = _hit_keys(result.hits)
        assert set(found) == expected, (
            f"{where}: search missed {sorted(expected - set(found))}, "
            f"found extra {sorted(set(found) - expected)}"
        )
        assert len(found) == len(expected) == result.total, f"{where}: duplicates or bad total"
        # The database picks the best few by its form of the rank: the same as ranking all.
        few = await search(store, query, limit=FEW, now=NOW, seconds=NO_BUDGET)
        assert _hit_keys(few.hits) == found[:FEW], f"{where}: the best {FEW} differ"
        assert few.total == result.total, f"{where}: the total depends on the limit"
        matched += bool(expected)
    # The generator is worth something only if many queries match some but not all reports.
    assert matched >= queries // 3, f"seed {seed}: only {matched} of {queries} queries matched"


# These tests judge what search finds, not how fast: a loaded machine must not fail them by
# the chat's time budget (tests/core/store/search/test_budget.py tests the budget).
NO_BUDGET = 600.0


@pytest.fixture(autouse=True)
def _small_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    """A walk back over many ranges, PostgreSQL checking words row by row in the first few."""
    monkeypatch.setattr(search_module, "FIRST_CHUNK", 7)
    monkeypatch.setattr(search_module, "PER_ROW_ROWS", 30)


async def test_search_answers_as_the_brute_force_evaluator(store: ReportStore) -> None:
    await _check(store, 200, SEED)


@pytest.mark.slow
async def test_search_answers_as_the_brute_force_evaluator_1000_queries(
    store: ReportStore,
) -> None:
    await _check(store, 1000, SEED + 1)
