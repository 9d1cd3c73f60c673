"""Platform pacing: in one process, and shared by replicas through PostgreSQL."""

from __future__ import annotations

import asyncio
import sys
import time

from bot.core.db import create_engine, migrate
from bot.core.pacing import LocalPace, SharedPace, make_pace
from bot.settings import Platform
from tests.conftest import ROOT

RATE = 40.0


async def _send_times(pace: LocalPace | SharedPace, count: int, sink: list[float]) -> None:
    for _ in range(count):
        await pace.wait()
        sink.append(time.monotonic())


def _max_in_any_second(times: list[float]) -> int:
    times = sorted(times)
    return max(sum(1 for t in times[i:] if t - start < 1.0) for i, start in enumerate(times))


async def test_one_process_never_exceeds_the_rate() -> None:
    times: list[float] = []
    pace = LocalPace(RATE)
    await asyncio.gather(*(_send_times(pace, 20, times) for _ in range(4)))
    assert _max_in_any_second(times) <= RATE + 1


async def test_replicas_share_one_rate_through_postgresql(postgres_database_url: str) -> None:
    engines = [create_engine(postgres_database_url) for _ in range(3)]
    await migrate(engines[0])
    try:
        paces = [make_pace(engine, Platform.TELEGRAM, RATE) for engine in engines]
        assert all(isinstance(p, SharedPace) for p in paces)
        times: list[float] = []
        await asyncio.gather(*(_send_times(p, 30, times) for p in paces))
    finally:
        for engine in engines:
            await engine.dispose()
    assert len(times) == 90
    assert _max_in_any_second(times) <= RATE + 1
    assert max(times) - min(times) >= (90 - RATE - 1) / RATE


async def test_three_replicas_migrating_at_once_all_start(
    database_url: str, subprocess_env: dict[str, str]
) -> None:
    subprocess_env["BOT_DATABASE_URL"] = database_url
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "migrate",
            cwd=ROOT, env=subprocess_env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(3)
    ]  # fmt: skip
    outputs = [await p.communicate() for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err.decode()[-2000:]
        assert out.decode().strip() == "database at revision 0005"
    engine = create_engine(database_url)
    await migrate(engine)  # and again: nothing to do, no error
    await engine.dispose()
