"""Issue 16, the store's full-text index: every needle is a substring of one normalized field.

Both backends: two-character Chinese words (no trigram) and longer ones, English words in any
case, a phrase with a space, no match across two fields, the index following an update and the
one-by-one fallback, the migration filling an existing store, and the words' answer agreeing
with a brute-force scan over random reports.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from sqlalchemy import delete

import bot.core.store.finder.search as search_module
from bot.core.query import And, Text
from bot.core.query.text import contains, normalize_text
from bot.core.reports.model import Report
from bot.core.reports.parse.parser import parse_file
from bot.core.store.finder.search import search
from bot.core.store.reports import IngestResult, ReportStore, StoreRejection
from bot.core.store.search import field_texts, rebuild_index
from bot.core.store.search.text_index import SQLITE_EMPTY
from bot.core.store.sql.db import (
    HEAD_REVISION,
    create_engine,
    current_revision,
    migrate,
    write_transaction,
)
from bot.core.store.sql.tables import reports
from tests.kits.migrations import upgrade_to
from tests.kits.paths import SEED


@pytest.fixture(autouse=True)
def _every_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the index: let a search read every match, not the newest 1,000."""
    monkeypatch.setattr(search_module, "WINDOW", 100_000)


def _report(number: int, **fields: str) -> Report:
    return Report(repo="verl-project/verl", number=number, **{"title": "t", **fields})


async def _find(store: ReportStore, *words: str) -> list[int]:
    """PR numbers of the reports holding every word (no word: every report)."""
    query = And(tuple(_word(normalize_text(word)) for word in words))
    result = await search(store, query, limit=100_000, now=datetime.now(UTC))
    return sorted(hit.report.number for hit in result.hits)


def _word(value: str) -> Text:
    return Text(value[:-1], prefix=True) if value.endswith("*") else Text(value)


async def test_two_character_chinese_words_are_found(store: ReportStore) -> None:
    await store.upsert_many(
        [
            (_report(1, summary="调整权重同步的顺序"), ""),
            (_report(2, risks="显存占用上升"), ""),
            (_report(3, title="权衡显卡"), ""),
        ]
    )
    assert await _find(store, "权重") == [1]
    assert await _find(store, "显存") == [2]
    assert await _find(store, "显") == [2, 3]
    assert await _find(store, "权重同步") == [1]
    assert await _find(store, "重同") == [1]
    assert await _find(store, "存占用上") == [2]
    assert await _find(store, "同权") == []


async def test_english_words_any_case_and_phrases(store: ReportStore) -> None:
    await store.upsert_many(
        [
            (_report(1, title="Fix FP8 rollout", motivation="The weight sync was slow"), ""),
            (_report(2, implementation="use ＦＰ８ kernels", impact="weight  loading"), ""),
        ]
    )
    assert await _find(store, "fp8") == [1, 2], "case and full width fold"
    assert await _find(store, "ROLLOUT") == [1]
    assert await _find(store, "weight sync") == [1]
    assert await _find(store, "weight loading") == [2], "whitespace runs are one space"
    assert await _find(store, "sync weight") == []
    assert await _find(store, "fp8", "weight") == [1, 2]
    assert await _find(store, "fp8", "kernels") == [2]
    assert await _find(store, "ＦＰ８ kernels") == [2]
    assert await _find(store, "kernel") == [], "a Latin word is found whole, not inside another"
    assert await _find(store, "%") == [] and await _find(store, "_") == []


async def test_a_needle_never_spans_two_fields(store: ReportStore) -> None:
    await store.upsert(_report(1, title="abc", summary="def", risks="权", impact="重"))
    assert await _find(store, "abcdef") == []
    assert await _find(store, "cd") == []
    assert await _find(store, "c d") == []
    assert await _find(store, "权重") == []
    assert await _find(store, "abc", "def") == [1], "AND of needles may use different fields"
    assert await _find(store, "权", "重") == [1]


async def test_the_index_follows_an_update(store: ReportStore) -> None:
    await store.upsert(_report(7, summary="显存 leak in rollout"))
    assert await _find(store, "显存") == [7]
    await store.upsert(_report(7, summary="权重 sync in trainer"))
    assert await _find(store, "显存") == []
    assert await _find(store, "rollout") == []
    assert await _find(store, "权重") == [7]
    assert await _find(store, "trainer") == [7]
    assert await store.count() == 1


async def test_the_one_by_one_fallback_indexes_the_good_reports(store: ReportStore) -> None:
    seed = parse_file(SEED).report
    bad = seed.model_copy(update={"number": 10**30, "summary": "显存坏"})
    items = [(seed.model_copy(update={"number": n, "summary": f"显存 {n}号"}), "") for n in (1, 2)]
    outcomes = await store.upsert_each([items[0], (bad, "bad"), items[1]])
    assert [type(o) for o in outcomes] == [IngestResult, StoreRejection, IngestResult]
    assert await _find(store, "显存") == [1, 2]
    assert await _find(store, "2号") == [2]
    assert await _find(store, "显存坏") == []


async def test_rebuild_and_an_unindexed_store(store: ReportStore) -> None:
    await store.upsert_many([(_report(n, summary=f"权重 {n}"), "") for n in range(1, 4)])
    async with write_transaction(store.engine) as conn:  # as if the index were lost
        for statement in _emptying(conn.dialect.name):
            await conn.exec_driver_sql(statement)
    assert await _find(store, "权重") == []
    assert await rebuild_index(store.engine) == 3
    assert await _find(store, "权重") == [1, 2, 3]
    assert await rebuild_index(store.engine) == 3, "again: nothing twice"
    assert await _find(store, "权重") == [1, 2, 3]
    async with write_transaction(store.engine) as conn:
        await conn.execute(delete(reports).where(reports.c.number == 2))
    await rebuild_index(store.engine)
    assert await _find(store, "权重") == [1, 3]


def _emptying(dialect: str) -> tuple[str, ...]:
    index = SQLITE_EMPTY if dialect == "sqlite" else ("DELETE FROM report_search",)
    return (*index, "DELETE FROM report_facets")


async def test_no_needles_and_nul(store: ReportStore) -> None:
    await store.upsert_many(
        [(_report(1, summary="a\x00b 权重"), ""), (_report(2, summary="ab"), "")]
    )
    assert await _find(store) == [1, 2]
    assert await _find(store, "") == [1, 2]
    assert await _find(store, "a\x00b") == [1]
    assert await _find(store, "a\x00b", "权重") == [1]
    assert await _find(store, "ab") == [2]


async def test_latin_words_are_whole_words_and_a_star_asks_their_start(
    store: ReportStore,
) -> None:
    await store.upsert_many(
        [
            (_report(1, title="[rollout] fix CI: flaky test", summary="用ci测试"), ""),
            (_report(2, title="a specific decision", risks="load_format=dummy"), ""),
            (_report(3, title="enroll the rollouts", implementation="v0.5.1 权重"), ""),
        ]
    )
    assert await _find(store, "ci") == [1], "CI and ci beside Chinese, never inside a word"
    assert await _find(store, "roll*") == [1, 3]
    assert await _find(store, "rollout*") == [1, 3]
    assert await _find(store, "rollout") == [1]
    assert await _find(store, "format") == [], "`_` is a word character, as in \\w"
    assert await _find(store, "load_format") == [2]
    assert await _find(store, "v0.5") == [3], "a needle with a `.` inside: whole at its edges"
    assert await _find(store, "v0.5.1 权") == [3]
    assert await _find(store, "0.5.1") == [], "its edge `0` runs on from `v` in the text"
    assert await _find(store, "权") == [3]


# --- against a brute-force scan ---------------------------------------------------------------

ALPHABET = "权重显存调度同步 abAB_%\"'\\ ﬁｆ\n"


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40)))


def _random_report(rng: random.Random, number: int) -> Report:
    fields = ("summary", "recommendation", "motivation", "implementation", "risks", "impact")
    texts = {name: _text(rng) for name in fields}
    return _report(number, title=_text(rng).strip() or "t", comment_highlights=_text(rng), **texts)


@pytest.mark.slow  # generated stores and queries: CI runs it (SLOW=1)
async def test_candidates_equal_a_brute_force_scan(store: ReportStore) -> None:
    rng = random.Random(16)
    made = [_random_report(rng, n) for n in range(1, 201)]
    await store.upsert_many([(r, "") for r in made])
    normalized = {r.number: field_texts(r) for r in made}
    pool = [t for texts in normalized.values() for t in texts if t]
    for _ in range(300):
        count = rng.choice([1, 1, 2])
        needles: list[str] = []
        for _ in range(count):
            source = rng.choice(pool)
            size = rng.randint(1, 4)
            start = rng.randrange(max(len(source) - size, 0) + 1)
            needles.append(normalize_text(source[start : start + size]) or "x")
        if rng.random() < 0.2:
            needles.append(normalize_text(_text(rng)[:3]) or "y")
        expected = sorted(
            number
            for number, texts in normalized.items()
            if all(any(contains(t, n) for t in texts) for n in needles)
        )
        assert await _find(store, *needles) == expected, needles


# --- the migration fills the index of a store that had none --------------------------------------


async def test_the_migration_indexes_an_existing_store(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        async with write_transaction(engine) as conn:
            await conn.run_sync(upgrade_to, "0005")
        now = datetime(2026, 8, 17, tzinfo=UTC)
        async with write_transaction(engine) as conn:  # rows as the version before wrote them
            await conn.execute(
                reports.insert(),
                [
                    {
                        "repo": "verl-project/verl",
                        "number": n,
                        "title": "t",
                        "seq": n,
                        "revision": 1,
                        "content_hash": str(n),
                        "data": _report(n, summary=f"显存 {n}号").model_dump(mode="json"),
                        "ingested_at": now,
                        "updated_at": now,
                    }
                    for n in range(1, 1203)  # more than two fill batches
                ],
            )
        await migrate(engine)
        assert await current_revision(engine) == HEAD_REVISION
        store = ReportStore(engine)
        assert len(await _find(store, "显存")) == 1202
        assert await _find(store, "1201号") == [1201]
        assert await _find(store, "存 7号") == [7]
        assert await _find(store, "7号") == [7], "its Latin edge is whole: not in 17号"
        assert len(await _find(store, "号")) == 1202
    finally:
        await engine.dispose()
