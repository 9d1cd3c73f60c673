"""Three `prdigest run` replicas on one PostgreSQL: every digest reaches its channel once."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.core.db import create_engine
from bot.core.tables import destinations, digest_runs
from tests.fakes.slack_api import FakeSlack
from tests.proc_kit import BotProcess

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

CHANNELS = ("C0TEST1", "C0TEST2")
TIMES = 20
EVERY = 3  # seconds between scheduled digests


def _config(tmp_path: Path) -> Path:
    lines = ["delivery: {tick_seconds: 0.5, lease_seconds: 5}", "channels:"]
    for index, target in enumerate(CHANNELS):
        lines.append(
            f"  - {{name: team{index}, platform: slack, target: {target}, post_empty: true,"
            f" schedule: '*/{EVERY} * * * * *', timezone: UTC, locale: en}}"
        )
    path = tmp_path / "bot.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


async def _runs(url: str) -> dict[str, list[object]]:
    engine = create_engine(url)
    async with engine.connect() as conn:
        rows = await conn.execute(
            select(destinations.c.target, digest_runs.c.scheduled_for, digest_runs.c.status)
            .join(destinations, destinations.c.id == digest_runs.c.destination_id)
            .order_by(digest_runs.c.scheduled_for)
        )
        found: dict[str, list[object]] = {}
        for row in rows:
            found.setdefault(row.target, []).append(row)
    await engine.dispose()
    return found


async def test_three_replicas_deliver_each_scheduled_digest_exactly_once(
    database_url: str, subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("replicas need PostgreSQL")
    async with FakeSlack() as fake:
        env = {
            **subprocess_env,
            "BOT_DATABASE_URL": database_url,
            "BOT_CONFIG": str(_config(tmp_path)),
            "SLACK_BOT_TOKEN": fake.bot_token,
            "SLACK_SIGNING_SECRET": "replica-test-secret",
            "SLACK_API_URL": fake.api_url,
        }
        replicas = [BotProcess(dict(env)) for _ in range(3)]
        for bot in replicas:
            await bot.start()
        try:
            for bot in replicas:
                await bot.wait_ready(timeout=60)
            await asyncio.sleep(TIMES * EVERY + 4)
        finally:
            codes = [await bot.terminate() for bot in replicas]
        posted = Counter(m.channel for m in fake.posted if m.method == "chat.postMessage")
    assert codes == [0, 0, 0]
    runs = await _runs(database_url)
    for target in CHANNELS:
        times = [r.scheduled_for for r in runs[target]]  # type: ignore[attr-defined]
        assert len(times) >= TIMES, f"{target}: only {len(times)} digests"
        assert len(set(times)) == len(times)
        gaps = {b - a for a, b in itertools.pairwise(times)}
        assert gaps == {timedelta(seconds=EVERY)}, f"{target}: a scheduled time was skipped"
        delivered = [r for r in runs[target] if r.status == "delivered"]  # type: ignore[attr-defined]
        assert posted[target] == len(delivered), f"{target}: posts ≠ delivered digests"
        assert len(delivered) >= len(times) - 2, "at most the last runs still in flight at stop"
