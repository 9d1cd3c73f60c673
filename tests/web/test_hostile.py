"""Issue 14: the ingest API under hostile input and bad luck.

- A poisoned body (a number the store cannot hold, `true`, a path for a repo, a `merged_at`
  that overflows in UTC) is a 422 naming the field, never a 500.
- The store unavailable (server down; a SQLite write lock held past the busy timeout) is a 503
  with Retry-After, never a 500.
- A body trickled byte by byte is cut at the body deadline with a 408, on a real uvicorn.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

import bot.adapters.http_body
import bot.core.store.sql.db as db
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate
from bot.service.server import MAX_CONCURRENCY, MAX_HEADER_BYTES, server_config
from bot.web.metrics import Metrics
from bot.web.routes import RETRY_AFTER_SECONDS, WebDeps, build_web
from tests.kits.paths import SEED
from tests.kits.waiting import until

TOKEN = "ingest-secret-token"
JSON_AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
MARKDOWN_AUTH = {**JSON_AUTH, "Content-Type": "text/markdown"}
BASE: dict[str, Any] = {"repo": "verl-project/verl", "number": 7422, "title": "fix: x"}


def _deps(store: ReportStore) -> WebDeps:
    return WebDeps(
        store=store, metrics=Metrics(), rules=(), ingest_token=TOKEN, is_ready=lambda: True
    )


async def _client(store: ReportStore) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=build_web(_deps(store)))
    return httpx.AsyncClient(transport=transport, base_url="http://bot")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"number": 10**30}, "number: a PR number is at most 2147483647"),
        ({"number": 2**31}, "number: a PR number is at most 2147483647"),
        ({"number": True}, "number: a boolean is not a PR number"),
        ({"repo": "../../etc/passwd"}, "repo: expected owner/name"),
        ({"repo": "o/" + "r" * 300}, "repo: a repository name is at most 200 characters"),
        ({"title": "   "}, "title: blank"),
        ({"merged_at": "9999-12-31T23:00-14:00"}, "merged_at: out of range once converted to UTC"),
    ],
)
async def test_a_poisoned_body_is_422_naming_the_field(
    store: ReportStore, change: dict[str, Any], reason: str
) -> None:
    async with await _client(store) as http:
        body = json.dumps({**BASE, **change})
        response = await http.post("/api/reports", content=body, headers=JSON_AUTH)
    assert response.status_code == 422, response.text
    assert response.json()["error"].startswith(reason)
    assert await store.count() == 0


async def test_the_store_down_is_503_with_retry_after() -> None:
    engine = create_engine("postgresql://postgres@127.0.0.1:1/nothing-listens-here")
    try:
        async with await _client(ReportStore(engine)) as http:
            response = await http.post(
                "/api/reports", content=SEED.read_bytes(), headers=MARKDOWN_AUTH
            )
    finally:
        await engine.dispose()
    assert response.status_code == 503
    assert response.headers["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert "unavailable" in response.json()["error"]


async def test_a_sqlite_lock_past_the_busy_timeout_is_503_then_the_write_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db, "SQLITE_BUSY_TIMEOUT_MS", 300)
    path = tmp_path / "bot.db"
    engine = create_engine(f"sqlite:///{path}")
    await migrate(engine)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        async with await _client(ReportStore(engine)) as http:
            holder.execute("BEGIN IMMEDIATE")
            locked = await http.post(
                "/api/reports", content=SEED.read_bytes(), headers=MARKDOWN_AUTH
            )
            holder.execute("ROLLBACK")
            after = await http.post(
                "/api/reports", content=SEED.read_bytes(), headers=MARKDOWN_AUTH
            )
    finally:
        holder.close()
        await engine.dispose()
    assert locked.status_code == 503, locked.text
    assert locked.headers["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert after.status_code == 201


@pytest.fixture
async def served(store: ReportStore) -> AsyncIterator[int]:
    """The web app on a real uvicorn (prdigest's settings) on a loopback port."""
    config = server_config(build_web(_deps(store)), "127.0.0.1", 0, lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=None))
    await until(lambda: server.started, 10, "uvicorn never started")
    yield int(server.servers[0].sockets[0].getsockname()[1])
    server.should_exit = True
    await task


async def _trickle(port: int, pause: float) -> tuple[bytes, asyncio.Task[None]]:
    """Post a body a byte at a time, reading while writing; the answer (read to EOF) and the
    task that goes on writing until the server ends the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (
        "POST /api/reports HTTP/1.1\r\nHost: bot\r\nContent-Type: text/markdown\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Length: 1000000\r\n\r\n"
    )
    writer.write(head.encode())

    async def trickle() -> None:
        try:
            for _ in range(1_000_000):
                writer.write(b"x")
                await writer.drain()
                await asyncio.sleep(pause)
        finally:
            writer.close()

    sender = asyncio.create_task(trickle())
    try:  # the whole body would take minutes: the server answering first is the cut
        return await asyncio.wait_for(reader.read(), timeout=10), sender
    except BaseException:
        sender.cancel()
        raise


# 50 ms between bytes, and 0.5 ms: bytes still in flight when the answer goes out, which
# the kernel answered with a reset that lost the 408 (every time, before the lingering close).
@pytest.mark.parametrize("pause", [0.05, 0.0005])
async def test_a_trickled_body_is_cut_at_the_deadline_with_408(
    served: int, monkeypatch: pytest.MonkeyPatch, pause: float
) -> None:
    monkeypatch.setattr(bot.adapters.http_body, "BODY_DEADLINE_SECONDS", 0.5)
    for _ in range(3):
        answer, sender = await _trickle(served, pause)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b"connection: close" in answer.lower()
        # the client read the answer and EOF while still writing; the server ends the
        # connection after its bounded linger, however long the client goes on sending
        with pytest.raises(ConnectionError):
            await asyncio.wait_for(sender, timeout=30)


def test_uvicorn_runs_with_connection_and_header_limits() -> None:
    store = ReportStore(create_engine("sqlite://"))  # never connected: only the app is built
    config = server_config(build_web(_deps(store)), "127.0.0.1", 0)
    assert config.limit_concurrency == MAX_CONCURRENCY
    assert config.h11_max_incomplete_event_size == MAX_HEADER_BYTES
    assert config.timeout_keep_alive > 0


def _post_with_urllib(port: int, body: bytes) -> tuple[int, str]:
    """What Python's urllib sees: it writes the whole body before it reads the answer."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/reports", data=body, headers=MARKDOWN_AUTH, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.mark.parametrize("megabytes", [3, 20])
async def test_an_oversized_report_is_a_413_that_urllib_reads_not_a_reset(
    served: int, megabytes: int
) -> None:
    body = b"x" * (megabytes * 1024 * 1024)
    status, text = await asyncio.to_thread(_post_with_urllib, served, body)
    assert status == 413, text
    assert "larger than 2 MB" in text
