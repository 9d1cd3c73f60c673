"""The report store on SQLite and PostgreSQL: keys, sequence numbers, revisions."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from bot.core.reports.model import Report
from bot.core.reports.parse.parser import parse_file
from bot.core.store.reports import WINDOW_CHUNK, IngestOutcome, ReportStore
from tests.kits.delivery import newest_seq_of
from tests.kits.paths import SEED


def _seed() -> Report:
    return parse_file(SEED).report


async def test_new_report_is_stored_with_first_revision(store: ReportStore) -> None:
    result = await store.upsert(_seed(), source="seed")
    assert result.outcome is IngestOutcome.NEW
    assert result.revision == 1
    [found] = await store.find(7422)
    assert found.report == _seed()
    assert found.seq == result.seq


async def test_identical_report_changes_nothing(store: ReportStore) -> None:
    first = await store.upsert(_seed())
    again = await store.upsert(_seed())
    assert again.outcome is IngestOutcome.UNCHANGED
    assert (again.seq, again.revision) == (first.seq, first.revision)
    assert await store.count() == 1


async def test_changed_report_is_updated_in_place_with_a_new_seq(store: ReportStore) -> None:
    first = await store.upsert(_seed())
    other = await store.upsert(_seed().model_copy(update={"number": 1, "title": "x"}))
    changed = _seed().model_copy(update={"summary": "a better one-liner"})
    updated = await store.upsert(changed)
    assert updated.outcome is IngestOutcome.UPDATED
    assert updated.revision == 2
    assert updated.seq > other.seq > first.seq
    [found] = await store.find(7422, "verl-project/verl")
    assert found.report.summary == "a better one-liner"
    assert [s.report.number for s in await store.since(first.seq)] == [1, 7422]
    assert await store.count() == 2


async def test_same_number_in_two_repos_are_two_reports(store: ReportStore) -> None:
    await store.upsert(_seed())
    await store.upsert(_seed().model_copy(update={"repo": "vllm-project/vllm"}))
    assert {s.report.repo for s in await store.find(7422)} == {
        "verl-project/verl",
        "vllm-project/vllm",
    }
    [only] = await store.find(7422, "VLLM-project/vllm")
    assert only.report.repo == "vllm-project/vllm"


async def test_tag_counts(store: ReportStore) -> None:
    await store.upsert(_seed())
    await store.upsert(_seed().model_copy(update={"number": 2, "title": "x", "tags": ["fix"]}))
    counts = dict(await store.tag_counts())
    assert counts["fix"] == 2
    assert counts["rollout"] == 1


async def test_seq_grows_with_every_write_across_a_batch(store: ReportStore) -> None:
    base = _seed()
    results = await store.upsert_many(
        [(base.model_copy(update={"number": n}), "") for n in range(1, 6)]
    )
    seqs = [r.seq for r in results]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == 5
    assert await newest_seq_of(store) == seqs[-1]


async def test_a_window_over_several_chunks_is_the_newest_reports_oldest_first(
    store: ReportStore,
) -> None:
    base = _seed()
    count = 2 * WINDOW_CHUNK + 7
    written = [
        base.model_copy(update={"number": n, "title": f"change {n}"}) for n in range(1, count + 1)
    ]
    await store.upsert_many([(report, "") for report in written])
    limit = 2 * WINDOW_CHUNK + 3  # the window ends inside a chunk, and some reports fall outside
    window = await store.since(0, limit)
    assert [item.report for item in window] == written[-limit:]
    assert [item.seq for item in window] == sorted(item.seq for item in window)
    assert [item.report.number for item in await store.since(window[-3].seq)] == [
        count - 1,
        count,
    ]


async def test_reports_read_back_share_one_fields_set_and_stay_whole(store: ReportStore) -> None:
    base = _seed()
    await store.upsert_many([(base.model_copy(update={"number": n}), "") for n in (1, 2)])
    first, second = await store.since(0)
    assert first.report.model_fields_set is second.report.model_fields_set
    assert first.report.model_fields_set == set(Report.model_fields)
    assert first.report.key_files[0].model_fields_set is second.report.key_files[0].model_fields_set
    assert second.report == base.model_copy(update={"number": 2})
    changed = first.report.model_copy(update={"summary": "other"})
    assert changed.summary == "other" and second.report.summary == base.summary
    assert second.report.model_fields_set == set(Report.model_fields)
    fresh = Report.model_validate(base.model_dump(mode="json"))  # parsed, not read back
    assert fresh.model_fields_set is not first.report.model_fields_set


async def test_concurrent_ingest_of_one_report_from_two_processes_keeps_one_row(
    store: ReportStore, database_url: str, subprocess_env: dict[str, str]
) -> None:
    subprocess_env["BOT_DATABASE_URL"] = database_url
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            "ingest",
            "-q",
            str(SEED),
            env=subprocess_env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(2)
    ]
    outputs = [await p.communicate() for p in procs]
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err.decode()
    summaries = sorted(out.decode().strip().splitlines()[-1] for out, _ in outputs)
    assert summaries == [
        "0 new, 0 updated, 1 unchanged, 0 failed",
        "1 new, 0 updated, 0 unchanged, 0 failed",
    ]
    assert await store.count() == 1


@pytest.mark.parametrize("bad", ["mysql://x/y", "not a url"])
def test_unsupported_database_url_is_a_clear_error(bad: str) -> None:
    from bot.core.store.sql.db import DatabaseURLError, async_url

    with pytest.raises(DatabaseURLError, match="BOT_DATABASE_URL"):
        async_url(bad)


def test_sqlite_file_and_directory_are_created_on_first_use(tmp_path: Path) -> None:
    from bot.core.store.sql.db import create_engine, migrate

    async def go() -> None:
        engine = create_engine(f"sqlite:///{tmp_path / 'nested' / 'bot.db'}")
        await migrate(engine)
        async with engine.connect() as conn:
            mode = (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar()
        await engine.dispose()
        assert mode == "wal"

    asyncio.run(go())
    assert (tmp_path / "nested" / "bot.db").exists()


async def test_one_batch_naming_a_report_twice_stores_both_versions_in_order(
    store: ReportStore,
) -> None:
    first, second = _seed(), _seed().model_copy(update={"summary": "second"})
    results = await store.upsert_many([(first, "a"), (second, "b"), (second, "b")])
    assert [r.outcome for r in results] == [
        IngestOutcome.NEW,
        IngestOutcome.UPDATED,
        IngestOutcome.UNCHANGED,
    ]
    [found] = await store.find(7422)
    assert (found.report.summary, found.revision) == ("second", 2)
