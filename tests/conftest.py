"""Shared fixtures: the network guard, a fresh store per test, the PostgreSQL switch."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

sys.path.insert(0, str(Path(__file__).parent / "netguard"))
import netguard

from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate
from tests.kits.paths import ROOT

PG_ENV = "BOT_TEST_DATABASE_URL"
PG_HINT = (
    f"PostgreSQL tests skipped: set {PG_ENV}=postgresql+psycopg://postgres@127.0.0.1:5432/test "
    "(a reachable server; .ci/run sets it)"
)


@pytest.fixture(autouse=True)
def _network_guard() -> Iterator[None]:
    before = len(netguard.blocked)
    yield
    reached = netguard.blocked[before:]
    assert not reached, f"test tried to reach non-loopback addresses: {reached}"


@pytest.fixture
def subprocess_env(tmp_path: Path) -> dict[str, str]:
    """Environment for `prdigest` subprocesses: guarded network, a private SQLite store."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "TELEGRAM_"))}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).parent / "netguard"), str(ROOT), env.get("PYTHONPATH", "")]
    )
    env["BOT_DATABASE_URL"] = f"sqlite:///{tmp_path / 'bot.db'}"
    env["BOT_CONFIG"] = ""
    env.pop("BOT_INGEST_TOKEN", None)
    return env


def postgres_url() -> str | None:
    return os.environ.get(PG_ENV) or None


def _database_params() -> list[object]:
    return ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@asynccontextmanager
async def _fresh_database(kind: str, tmp_path: Path) -> AsyncIterator[str]:
    """A fresh, migrated database: a SQLite file, or a private schema on the test PostgreSQL."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'bot.db'}"
        return
    base = postgres_url()
    if base is None:
        pytest.skip(PG_HINT)
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    try:
        async with admin.begin() as conn:
            await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    except (OSError, OperationalError) as exc:  # server not answering
        pytest.skip(f"{PG_HINT}: {exc}")
    sep = "&" if "?" in base else "?"
    try:
        yield f"{base}{sep}options=-csearch_path%3D{schema}"
    finally:
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


@pytest.fixture(params=_database_params())
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """Each test using it runs twice: on SQLite and on PostgreSQL."""
    async with _fresh_database(request.param, tmp_path) as url:
        yield url


@pytest.fixture(params=[pytest.param("postgresql", marks=pytest.mark.postgres)])
async def postgres_database_url(tmp_path: Path) -> AsyncIterator[str]:
    """For what only PostgreSQL does (replicas): a private schema, or a skip saying how."""
    async with _fresh_database("postgresql", tmp_path) as url:
        yield url


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[ReportStore]:
    engine = create_engine(database_url)
    await migrate(engine)
    try:
        yield ReportStore(engine)
    finally:
        await engine.dispose()
