"""The HTTP endpoints: ingest API statuses, health, readiness, metrics."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from bot.adapters.http_body import DRAIN_MAX_BYTES
from bot.core.store.reports import ReportStore
from bot.web.metrics import Metrics
from bot.web.routes import WebDeps, build_web
from tests.kits.paths import SEED

TOKEN = "ingest-secret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "text/markdown; charset=utf-8"}


@pytest.fixture
async def client(store: ReportStore) -> AsyncIterator[httpx.AsyncClient]:
    deps = WebDeps(
        store=store, metrics=Metrics(), rules=(), ingest_token=TOKEN, is_ready=lambda: True
    )
    transport = httpx.ASGITransport(app=build_web(deps))
    async with httpx.AsyncClient(transport=transport, base_url="http://bot") as http:
        yield http


async def test_a_new_report_is_created_then_unchanged(client: httpx.AsyncClient) -> None:
    body = SEED.read_bytes()
    first = await client.post("/api/reports", content=body, headers=AUTH)
    assert first.status_code == 201
    assert first.json()["ref"] == "verl-project/verl#7422"
    again = await client.post("/api/reports", content=body, headers=AUTH)
    assert again.status_code == 200
    assert again.json()["outcome"] == "unchanged"


async def test_json_reports_are_accepted(client: httpx.AsyncClient) -> None:
    from bot.core.reports.parse.parser import parse_file

    body = parse_file(SEED).report.model_dump_json()
    headers = {**AUTH, "Content-Type": "application/json"}
    response = await client.post("/api/reports", content=body, headers=headers)
    assert response.status_code == 201


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Type": "text/markdown"},
        {"Content-Type": "text/markdown", "Authorization": "Bearer wrong"},
        {"Content-Type": "text/markdown", "Authorization": f"Basic {TOKEN}"},
    ],
)
async def test_missing_or_wrong_token_is_401(
    client: httpx.AsyncClient, store: ReportStore, headers: dict[str, str]
) -> None:
    response = await client.post("/api/reports", content=SEED.read_bytes(), headers=headers)
    assert response.status_code == 401
    assert await store.count() == 0


async def test_five_megabytes_is_413_before_it_is_read(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/reports", content=b"x" * (5 * 1024 * 1024), headers=AUTH)
    assert response.status_code == 413


async def test_an_oversized_stream_without_length_is_413(client: httpx.AsyncClient) -> None:
    """Past the cap the body is read and dropped (so the client gets to read its 413), but
    only up to DRAIN_MAX_BYTES: an endless stream is not read forever."""
    sent = 0

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal sent
        for _ in range(200):
            sent += 1
            yield b"y" * (1024 * 1024)

    response = await client.post("/api/reports", content=chunks(), headers=AUTH)
    assert response.status_code == 413
    assert response.headers["connection"] == "close"
    assert sent <= DRAIN_MAX_BYTES // (1024 * 1024) + 2, "the server stopped reading past the bound"


async def test_wrong_content_type_is_415(client: httpx.AsyncClient) -> None:
    headers = {**AUTH, "Content-Type": "application/pdf"}
    response = await client.post("/api/reports", content=b"%PDF", headers=headers)
    assert response.status_code == 415


async def test_a_broken_report_is_422_naming_the_reason(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/reports", content=b"# notes\n\nnothing", headers=AUTH)
    assert response.status_code == 422
    assert "PR number" in response.json()["error"]


async def test_invalid_utf8_is_400(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/reports", content=b"\xff\xfe# PR #1", headers=AUTH)
    assert response.status_code == 400


async def test_health_readiness_and_metrics(client: httpx.AsyncClient) -> None:
    assert (await client.get("/healthz")).status_code == 200
    assert (await client.get("/readyz")).status_code == 200
    await client.post("/api/reports", content=SEED.read_bytes(), headers=AUTH)
    metrics = (await client.get("/metrics")).text
    assert 'prdigest_reports_ingested_total{outcome="new"} 1.0' in metrics
    assert "prdigest_outbox_depth" in metrics


async def test_not_ready_while_the_scheduler_is_down(store: ReportStore) -> None:
    deps = WebDeps(
        store=store, metrics=Metrics(), rules=(), ingest_token=None, is_ready=lambda: False
    )
    transport = httpx.ASGITransport(app=build_web(deps))
    async with httpx.AsyncClient(transport=transport, base_url="http://bot") as http:
        assert (await http.get("/readyz")).status_code == 503
        off = await http.post("/api/reports", content=b"x", headers=AUTH)
        assert off.status_code == 503
        assert "BOT_INGEST_TOKEN" in off.json()["error"]
