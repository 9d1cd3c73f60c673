"""Several processes firing the same digest at the same instant produce one digest."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest
from sqlalchemy import func, select

from bot.core.store.reports import ReportStore
from bot.core.store.sql.tables import digest_runs, outbox
from tests.kits.paths import ROOT, TESTS

RUNS = 20


@pytest.mark.slow
async def test_two_processes_firing_the_same_runs_make_one_digest_each(
    store: ReportStore, database_url: str, subprocess_env: dict[str, str]
) -> None:
    start = time.time() + 4.0  # both processes are up and waiting before the first instant
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(TESTS / "kits" / "fire_runs.py"),
            database_url,
            str(start),
            str(RUNS),
            cwd=ROOT,
            env=subprocess_env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(2)
    ]
    results = [await p.communicate() for p in procs]
    for proc, (_, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err.decode()[-2000:]
    created = [int(out.decode().strip()) for out, _ in results]
    assert sum(created) == RUNS, created
    async with store.engine.connect() as conn:
        runs = (await conn.execute(select(func.count()).select_from(digest_runs))).scalar_one()
        messages = (await conn.execute(select(func.count()).select_from(outbox))).scalar_one()
    assert runs == RUNS
    assert messages == RUNS, "one message per run (post_empty), none written twice"
