"""The search service (bot/core/store/finder/search.py): the index narrows, the query
language decides, and hits rank exact first, then by relevance, then newest. Both backends."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

import bot.core.store.finder.search as search_module
from bot.core.models import Locale
from bot.core.query import parse
from bot.core.render.results import result_notice
from bot.core.reports.model import Report
from bot.core.store.finder.search import search
from bot.core.store.reports import ReportStore

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _day(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def _report(number: int, **fields: Any) -> Report:
    return Report(repo="verl-project/verl", number=number, **{"title": "t", **fields})


async def _numbers(store: ReportStore, text: str, limit: int = 10) -> list[int]:
    result = await search(store, parse(text), limit=limit, now=NOW)
    return [hit.report.number for hit in result.hits]


async def test_exact_hits_first_then_relevance_then_newest(store: ReportStore) -> None:
    await store.upsert_many(
        [
            (_report(1, summary="权重 in the one-liner", merged_at=_day(2026, 1, 1)), ""),
            (_report(2, risks="权重 only in the risks", merged_at=_day(2026, 3, 1)), ""),
            (_report(3, title="权重同步", merged_at=_day(2026, 1, 1)), ""),
            (_report(4, risks="权重 also in the risks", merged_at=_day(2026, 5, 1)), ""),
            (_report(5, summary="nothing here"), ""),
            (_report(6, risks="权重", tags=["权重"], merged_at=_day(2025, 1, 1)), ""),
        ]
    )
    # 3 (in the title) and 6 (a tag) are exact hits; then the one-liner; then the risks
    # (as often, in texts as long), newest first.
    assert await _numbers(store, "权重") == [3, 6, 1, 4, 2]


async def test_a_named_number_ranks_first(store: ReportStore) -> None:
    await store.upsert_many(
        [
            (_report(n, title="rollout fix" if n != 7 else "other", summary="rollout"), "")
            for n in (7, 8, 9)
        ]
    )
    assert (await _numbers(store, "#7 OR rollout"))[0] == 7
    assert (await _numbers(store, "rollout OR 8"))[0] == 8


async def test_a_tag_asked_for_ranks_first(store: ReportStore) -> None:
    await store.upsert_many(
        [
            (_report(1, title="权重 in the title"), ""),
            (_report(2, summary="a ci job", tags=["ci"], merged_at=_day(2020, 1, 1)), ""),
        ]
    )
    assert await _numbers(store, "权重 OR tag:ci") == [2, 1]
    assert await _numbers(store, "ci OR 权重") == [2, 1]  # the bare word is a tag too


async def test_total_counts_past_the_limit(store: ReportStore) -> None:
    await store.upsert_many([(_report(n, summary="权重"), "") for n in range(1, 13)])
    result = await search(store, parse("权重"), limit=5, now=NOW)
    assert (len(result.hits), result.total, result.more) == (5, 12, 7)
    # Equal scores and no merge time: the newest ingested (highest seq) first.
    assert [hit.report.number for hit in result.hits] == [12, 11, 10, 9, 8]


async def test_the_query_language_decides_not_the_index(store: ReportStore) -> None:
    await store.upsert_many(
        [
            (_report(1, summary="权重", tags=["rollout"], impact_level="high"), ""),
            (_report(2, summary="权重", tags=["ci"], impact_level="low"), ""),
            (_report(3, summary="other", tags=["rollout"], impact_level="high"), ""),
            (Report(repo="acme/other", number=1, title="t", summary="权重"), ""),
        ]
    )
    assert await _numbers(store, "权重 -tag:ci") == [1, 1]
    assert await _numbers(store, "权重 impact>=medium repo:verl-project/verl") == [1]
    assert sorted(await _numbers(store, "tag:rollout")) == [1, 3]
    assert await _numbers(store, "number:2..3") == [3, 2]
    assert await _numbers(store, "-权重") == [3]


async def test_the_index_follows_an_update(store: ReportStore) -> None:
    await store.upsert(_report(1, summary="旧的权重同步"))
    assert await _numbers(store, "权重") == [1]
    await store.upsert(_report(1, summary="新的显存布局"))
    assert await _numbers(store, "权重") == []
    assert await _numbers(store, "显存") == [1]
    assert await _numbers(store, "布局 显存") == [1]


async def test_the_rows_are_read_in_chunks(store: ReportStore, monkeypatch: Any) -> None:
    from bot.core.store.finder import search as service

    monkeypatch.setattr(service, "CHUNK", 3)
    await store.upsert_many(
        [(_report(n, summary="权重" if n % 2 else "x"), "") for n in range(1, 11)]
    )
    assert sorted(await _numbers(store, "权重")) == [1, 3, 5, 7, 9]
    assert sorted(await _numbers(store, "-tag:none", limit=20)) == list(range(1, 11))


async def test_counting_stops_at_the_cap_and_says_so(
    store: ReportStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_module, "WINDOW", 4)
    await store.upsert_many(
        [(_report(n, summary="权重", merged_at=_day(2026, 1, n)), "") for n in range(1, 8)]
    )
    result = await search(store, parse("权重"), limit=2, now=NOW)
    assert (result.total, result.capped) == (4, True)
    assert [hit.report.number for hit in result.hits] == [7, 6], "newest first, all 0-scored"
    key, params = result_notice(
        [hit.report for hit in result.hits],
        result.total,
        "权重",
        Locale.EN,
        command="/find 权重 …",
        capped=result.capped,
    )
    assert key == "find_results_more"
    assert (params["total"], params["more"]) == ("4+", "2+")
    exact = await search(store, parse("权重 number:1..3"), limit=2, now=NOW)
    assert (exact.total, exact.capped) == (3, False)
    # The window is the newest four by when they were stored; a PR named is found however old.
    named = await search(store, parse("权重 OR #1"), limit=3, now=NOW)
    assert (named.total, named.capped) == (4, True)
    assert [hit.report.number for hit in named.hits] == [1, 7, 6]


async def test_the_walk_back_in_doubling_ranges_finds_what_one_range_would(
    store: ReportStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.upsert_many([(_report(n, summary=f"权重 {n % 3}"), "") for n in range(1, 41)])
    whole = [
        hit.report.number for hit in (await search(store, parse("权重 1"), limit=40, now=NOW)).hits
    ]
    monkeypatch.setattr(search_module, "FIRST_CHUNK", 1)
    monkeypatch.setattr(search_module, "PER_ROW_ROWS", 4)  # PostgreSQL: both ways of checking
    walked = await search(store, parse("权重 1"), limit=40, now=NOW)
    assert [hit.report.number for hit in walked.hits] == whole
    assert sorted(whole) == [n for n in range(1, 41) if n % 3 == 1]


async def test_relevance_counts_where_and_how_often(store: ReportStore) -> None:
    long = "无关的长段落。" * 40
    await store.upsert_many(
        [
            (_report(1, motivation=f"{long}权重{long}", merged_at=_day(2026, 9, 1)), ""),
            (_report(2, recommendation="关注权重", merged_at=_day(2026, 1, 1)), ""),
            (_report(3, summary="改为同步权重", merged_at=_day(2025, 1, 1)), ""),
            (_report(4, motivation="权重，权重，权重与权重", merged_at=_day(2025, 6, 1)), ""),
            (_report(5, motivation="权重", merged_at=_day(2025, 6, 1)), ""),
        ]
    )
    # The one-liner above the recommendation above a long section; four times above once;
    # once in a long text below once in a short one, however new.
    assert await _numbers(store, "权重") == [3, 2, 4, 5, 1]


async def test_related_lines_and_key_file_notes_are_searched(store: ReportStore) -> None:
    related = [{"number": 7434, "title": "fix weight sync", "relation": "同属权重同步链路"}]
    notes = [{"path": "verl/a.py", "note": "新增的分桶迭代器"}]
    await store.upsert_many(
        [
            (Report.model_validate({**_report(1).model_dump(), "related": related}), ""),
            (Report.model_validate({**_report(2).model_dump(), "key_files": notes}), ""),
        ]
    )
    assert await _numbers(store, "权重同步") == [1]
    assert await _numbers(store, '"weight sync"') == [1]
    assert await _numbers(store, "分桶迭代器") == [2]
    assert await _numbers(store, "7434") == []  # the related PR's number is not its text
