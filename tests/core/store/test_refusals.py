"""Issue 14 #1, the store's side: a row the database refuses cannot sink its batch.

`upsert_each` tries the batch in one transaction, and when the database refuses it for its
data writes each report alone: the good ones are stored, the bad one comes back as a
StoreRejection naming the driver's complaint. An outage is raised, never turned into
rejections. What the store already holds is read back even if it predates the model's bounds.
"""

from __future__ import annotations

import pytest
from sqlalchemy.exc import OperationalError

from bot.core.reports.model import Report
from bot.core.reports.parse.parser import parse_file
from bot.core.store.reports import IngestOutcome, IngestResult, ReportStore, StoreRejection
from bot.core.store.sql.db import create_engine
from tests.kits.paths import SEED


def _seed(number: int, **change: object) -> Report:
    # model_copy does not validate: this is how a report the model would refuse reaches the
    # store in these tests (as one did before the model bounded `number`).
    return parse_file(SEED).report.model_copy(update={"number": number, **change})


async def test_one_refused_row_does_not_sink_its_batch(store: ReportStore) -> None:
    items = [(_seed(n), f"good-{n}") for n in range(1, 6)]
    items.insert(2, (_seed(10**30), "bad"))
    outcomes = await store.upsert_each(items)
    rejected = outcomes.pop(2)
    assert isinstance(rejected, StoreRejection)
    assert rejected.reason.startswith("the store refused it: "), rejected.reason
    assert "INSERT" not in rejected.reason, "no SQL echoed"
    assert [o.outcome for o in outcomes if isinstance(o, IngestResult)] == [IngestOutcome.NEW] * 5
    assert sorted(s.report.number for s in await store.since(0)) == [1, 2, 3, 4, 5]


async def test_a_good_batch_takes_the_fast_path(
    store: ReportStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone: list[Report] = []
    original = store.upsert

    async def spy(report: Report, source: str = "") -> IngestResult:
        alone.append(report)
        return await original(report, source)

    monkeypatch.setattr(store, "upsert", spy)
    outcomes = await store.upsert_each([(_seed(n), "") for n in range(1, 4)])
    assert len(outcomes) == 3
    assert alone == [], "no report written alone when the batch is fine"


async def test_an_outage_is_raised_not_a_rejection() -> None:
    engine = create_engine("postgresql://postgres@127.0.0.1:1/nothing-listens-here")
    try:
        with pytest.raises(OperationalError):
            await ReportStore(engine).upsert_each([(_seed(1), "")])
    finally:
        await engine.dispose()


async def test_a_row_stored_before_the_bounds_is_still_read(store: ReportStore) -> None:
    if store.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL never held such a row (VARCHAR(200), INTEGER)")
    old = _seed(7, repo="legacy repo name")  # SQLite kept whatever it was given
    await store.upsert(old)
    [stored] = await store.since(0)
    assert stored.report.repo == "legacy repo name"
