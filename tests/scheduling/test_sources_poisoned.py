"""Issue 14 #1: one poisoned file in a source never costs the others of its poll.

- The issue's case: 10 good reports and one with `"number": 10**30` arrive in one poll. Before,
  the batch upsert raised OverflowError after all 11 files were remembered as seen, so the 10
  good ones were never stored, even after the bad file was removed.
- A file is remembered as seen only once stored or rejected: a poll whose write fails (the
  store unavailable) is tried again whole by the next poll.
- A file over 2 MB is rejected by name from its size, without being read.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from sqlalchemy.exc import OperationalError

from bot.core.reports.model import Report
from bot.core.store.ingest import TOO_LARGE
from bot.core.store.reports import IngestOutcome, IngestResult, ReportStore
from bot.scheduling.sources import SourcePoller
from bot.settings import Source
from tests.kits.poison import POISONS, good_report, write_good, write_poison


async def _stored_numbers(store: ReportStore) -> set[int]:
    return {stored.report.number for stored in await store.since(0)}


class FlakyStore(ReportStore):
    """A ReportStore whose next `failures` writes fail as if the database were down."""

    def __init__(self, store: ReportStore, failures: int) -> None:
        super().__init__(store.engine, store.clock)
        self.failures = failures

    async def upsert_many(self, items: Sequence[tuple[Report, str]]) -> list[IngestResult]:
        if self.failures > 0:
            self.failures -= 1
            raise OperationalError("INSERT …", {}, Exception("server closed the connection"))
        return await super().upsert_many(items)


async def test_ten_good_reports_beside_a_huge_number_are_all_stored(
    store: ReportStore, tmp_path: Path
) -> None:
    poller = SourcePoller(Source(dir=tmp_path), store, ())
    good = write_good(tmp_path, 10)
    bad = tmp_path / "huge.json"
    bad.write_text(json.dumps({"repo": "o/r", "title": "t", "number": 10**30}))
    result = await poller.poll()
    assert await _stored_numbers(store) == set(good)
    assert [(f.source, f.reason) for f in result.failures] == [
        (str(bad), "number: a PR number is at most 2147483647")
    ]
    bad.unlink()
    assert (await poller.poll()).results == []
    assert await _stored_numbers(store) == set(good)


async def test_a_poll_whose_write_fails_is_tried_again_whole(
    store: ReportStore, tmp_path: Path
) -> None:
    flaky = FlakyStore(store, failures=1)
    poller = SourcePoller(Source(dir=tmp_path), flaky, ())
    good = write_good(tmp_path, 10)
    bad = write_poison(tmp_path, POISONS[0], 1)
    with pytest.raises(OperationalError):
        await poller.poll()
    assert poller.seen == {str(bad): poller.seen[str(bad)]}, "only the rejected file is seen"
    bad.unlink()
    result = await poller.poll()
    assert sorted(r.outcome for r in result.results) == [IngestOutcome.NEW] * 10
    assert await _stored_numbers(store) == set(good)


async def test_every_poison_is_rejected_by_name_and_the_good_are_stored(
    store: ReportStore, tmp_path: Path
) -> None:
    good = write_good(tmp_path, 3)
    written = {
        str(write_poison(tmp_path, poison, 900 + i)): poison for i, poison in enumerate(POISONS)
    }
    result = await SourcePoller(Source(dir=tmp_path), store, ()).poll()
    assert await _stored_numbers(store) == set(good)
    reasons = {failure.source: failure.reason for failure in result.failures}
    assert reasons.keys() == written.keys()
    for source, poison in written.items():
        assert poison.reason in reasons[source], (poison.name, reasons[source])


async def test_a_file_over_2_mb_is_refused_from_its_size_unread(
    store: ReportStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as file:
        file.truncate(64 * 1024 * 1024)  # sparse: 64 MB that cost no disk

    def no_reading(self: Path, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"{self} was opened")

    monkeypatch.setattr(Path, "open", no_reading)
    monkeypatch.setattr(Path, "read_bytes", no_reading)
    result = await SourcePoller(Source(dir=tmp_path), store, ()).poll()
    assert [(f.source, f.reason) for f in result.failures] == [(str(big), TOO_LARGE)]
    assert TOO_LARGE == "larger than 2 MB"


@pytest.fixture
async def report_url() -> AsyncIterator[tuple[str, list[int]]]:
    """A loopback URL serving one report with an ETag; the list records each status sent."""
    statuses: list[int] = []
    body = good_report(10_001)

    async def serve(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == '"v1"':
            statuses.append(304)
            return web.Response(status=304)
        statuses.append(200)
        return web.Response(body=body, content_type="application/json", headers={"ETag": '"v1"'})

    app = web.Application()
    app.router.add_get("/r.json", serve)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}/r.json", statuses
    await runner.cleanup()


async def test_a_url_whose_write_fails_is_fetched_whole_again(
    store: ReportStore, report_url: tuple[str, list[int]]
) -> None:
    url, statuses = report_url
    poller = SourcePoller(Source(url=url), FlakyStore(store, failures=1), ())
    with pytest.raises(OperationalError):
        await poller.poll()
    result = await poller.poll()
    assert statuses == [200, 200], "the ETag is remembered only once the report is stored"
    assert [r.outcome for r in result.results] == [IngestOutcome.NEW]
    assert (await poller.poll()).results == []
    assert statuses[-1] == 304
