"""Polled sources: a directory and a URL (ETag, If-Modified-Since); bad input reported once."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from bot.core.store.reports import IngestOutcome, ReportStore
from bot.scheduling.sources import SourcePoller
from bot.settings import Source
from tests.kits.paths import SEED

SEED_TEXT = SEED.read_text(encoding="utf-8")


class ReportServer:
    """A loopback server for one report and an index of report URLs, counting 304s."""

    def __init__(self) -> None:
        self.report = SEED_TEXT
        self.hits: list[tuple[str, int]] = []
        self.url = ""

    async def _report(self, request: web.Request) -> web.Response:
        etag = f'"{hash(self.report) & 0xFFFF}"'
        if request.headers.get("If-None-Match") == etag:
            self.hits.append((request.path, 304))
            return web.Response(status=304)
        self.hits.append((request.path, 200))
        return web.Response(text=self.report, content_type="text/markdown", headers={"ETag": etag})

    async def _index(self, request: web.Request) -> web.Response:
        self.hits.append((request.path, 200))
        urls = [f"{self.url}/report.md", f"{self.url}/broken.md"]
        return web.Response(text=json.dumps(urls), content_type="application/json")

    async def _broken(self, request: web.Request) -> web.Response:
        self.hits.append((request.path, 200))
        return web.Response(text="# not a report", content_type="text/markdown")


@pytest.fixture
async def server() -> AsyncIterator[ReportServer]:
    state = ReportServer()
    app = web.Application()
    app.router.add_get("/report.md", state._report)
    app.router.add_get("/index.json", state._index)
    app.router.add_get("/broken.md", state._broken)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    state.url = f"http://127.0.0.1:{port}"
    yield state
    await runner.cleanup()


async def test_a_directory_source_ingests_new_and_changed_files(
    store: ReportStore, tmp_path: Path
) -> None:
    shutil.copy(SEED, tmp_path / "a.md")
    poller = SourcePoller(Source(dir=tmp_path), store, ())
    first = await poller.poll()
    assert [r.outcome for r in first.results] == [IngestOutcome.NEW]
    assert (await poller.poll()).results == [], "unchanged files are not even re-read"
    (tmp_path / "a.md").write_text(SEED_TEXT.replace("影响程度：中", "影响程度：高"))
    changed = await poller.poll()
    assert [r.outcome for r in changed.results] == [IngestOutcome.UPDATED]


async def test_a_bad_file_is_reported_once_not_every_poll(
    store: ReportStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "bad.md").write_text("# notes without a PR")
    poller = SourcePoller(Source(dir=tmp_path), store, ())
    caplog.set_level(logging.WARNING, logger="prdigest.sources")
    for _ in range(3):
        await poller.poll()
        (tmp_path / "bad.md").touch()
    assert sum("source.bad_report" in r.getMessage() for r in caplog.records) == 1


async def test_a_url_source_uses_etag_and_ingests_changes(
    store: ReportStore, server: ReportServer
) -> None:
    poller = SourcePoller(Source(url=f"{server.url}/report.md"), store, ())
    assert [r.outcome for r in (await poller.poll()).results] == [IngestOutcome.NEW]
    assert (await poller.poll()).results == []
    assert server.hits[-1] == ("/report.md", 304)
    server.report = SEED_TEXT.replace("影响程度：中", "影响程度：低")
    assert [r.outcome for r in (await poller.poll()).results] == [IngestOutcome.UPDATED]


async def test_an_index_of_urls_ingests_each_and_names_the_bad_one(
    store: ReportStore, server: ReportServer
) -> None:
    poller = SourcePoller(Source(url=f"{server.url}/index.json"), store, ())
    result = await poller.poll()
    assert [r.ref for r in result.results] == ["verl-project/verl#7422"]
    assert [f.source for f in result.failures] == [f"{server.url}/broken.md"]
    assert "PR number" in result.failures[0].reason
