"""Three `prdigest run` replicas on one PostgreSQL: every digest reaches its channel once."""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.core.store.sql.db import create_engine
from bot.core.store.sql.tables import destinations, digest_runs, run_members, subscriptions
from tests.fakes.slack.api import FakeSlack
from tests.kits.paths import TESTS
from tests.kits.proc import BotProcess, dry_run_texts, write_json_reports
from tests.kits.waiting import until

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

CHANNELS = ("C0TEST1", "C0TEST2")
TIMES = 20
EVERY = 3  # real seconds between scheduled digests: a cron minute on a clock this much faster
SCALE = 60 // EVERY
FAST_CLOCK = TESTS / "fakes" / "fastclock"


def _config(tmp_path: Path) -> Path:
    # tick_seconds is real time (APScheduler); the lease counts on the fast clock: 5 real s.
    lines = [f"delivery: {{tick_seconds: 0.5, lease_seconds: {5 * SCALE}}}", "channels:"]
    for index, target in enumerate(CHANNELS):
        lines.append(
            f"  - {{name: team{index}, platform: slack, target: {target}, post_empty: true,"
            " schedule: '* * * * *', timezone: UTC, locale: en}"
        )
        # a second subscription of the same destination, due every other run of the first
        lines.append(
            f"  - {{name: pairs{index}, platform: slack, target: {target}, post_empty: true,"
            " schedule: '*/2 * * * *', timezone: UTC, locale: en}"
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


async def _member_times(url: str) -> dict[str, list[datetime]]:
    """Each subscription's fire times, as its runs recorded them."""
    engine = create_engine(url)
    async with engine.connect() as conn:
        rows = await conn.execute(
            select(subscriptions.c.name, run_members.c.scheduled_for)
            .join(subscriptions, subscriptions.c.id == run_members.c.subscription_id)
            .order_by(run_members.c.scheduled_for)
        )
        found: dict[str, list[datetime]] = {}
        for name, at in rows:
            found.setdefault(name, []).append(at)
    await engine.dispose()
    return found


async def test_three_replicas_deliver_each_scheduled_digest_exactly_once(
    postgres_database_url: str, subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    async with FakeSlack() as fake:
        env = {
            **subprocess_env,
            "BOT_DATABASE_URL": postgres_database_url,
            "BOT_CONFIG": str(_config(tmp_path)),
            "SLACK_BOT_TOKEN": fake.bot_token,
            "SLACK_SIGNING_SECRET": "replica-test-secret",
            "SLACK_API_URL": fake.api_url,
            "PYTHONPATH": os.pathsep.join([str(FAST_CLOCK), subprocess_env["PYTHONPATH"]]),
            "PRDIGEST_FAST_CLOCK": f"{time.time()} {SCALE}",
        }
        replicas = [BotProcess(dict(env)) for _ in range(3)]
        for bot in replicas:
            await bot.start()
        try:
            for bot in replicas:
                await bot.wait_ready(timeout=60)

            def digested() -> bool:  # one post per digest (post_empty, one message each)
                posts = Counter(m.channel for m in fake.posted if m.method == "chat.postMessage")
                return all(posts[target] >= TIMES for target in CHANNELS)

            await until(digested, TIMES * EVERY + 60, f"fewer than {TIMES} digests per channel")
        finally:
            codes = [await bot.terminate() for bot in replicas]
        posted = Counter(m.channel for m in fake.posted if m.method == "chat.postMessage")
    assert codes == [0, 0, 0]
    runs = await _runs(postgres_database_url)
    for target in CHANNELS:
        times = [r.scheduled_for for r in runs[target]]  # type: ignore[attr-defined]
        assert len(times) >= TIMES, f"{target}: only {len(times)} digests"
        assert len(set(times)) == len(times)
        gaps = {b - a for a, b in itertools.pairwise(times)}
        assert gaps == {timedelta(minutes=1)}, f"{target}: a scheduled time was skipped"
        delivered = [r for r in runs[target] if r.status == "delivered"]  # type: ignore[attr-defined]
        assert posted[target] == len(delivered), f"{target}: posts ≠ delivered digests"
        assert len(delivered) >= len(times) - 2, "at most the last runs still in flight at stop"
    members = await _member_times(postgres_database_url)
    for index in range(len(CHANNELS)):
        every, pairs = members[f"team{index}"], members[f"pairs{index}"]
        assert len(set(every)) == len(every) and len(set(pairs)) == len(pairs)
        # planned with the minute's run, not apart (the first may be a catch-up of the minute
        # before the replicas started)
        assert set(pairs[1:]) <= set(every)
        assert {b - a for a, b in itertools.pairwise(pairs)} == {timedelta(minutes=2)}


async def test_killing_the_sending_replica_hands_its_digest_to_another(
    postgres_database_url: str, subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    reports = tmp_path / "reports"
    write_json_reports(reports, 120)
    config = tmp_path / "bot.yaml"
    config.write_text(
        "delivery: {tick_seconds: 0.5, lease_seconds: 3}\n"
        f"sources: [{{dir: '{reports}'}}]\n"
        "channels:\n  - {name: team, platform: slack, target: C0TEST1, max_items: 500,"
        " schedule: '0 0 * * *', timezone: UTC, locale: en}\n",
        encoding="utf-8",
    )
    async with FakeSlack() as fake:
        env = {
            **subprocess_env,
            "BOT_DATABASE_URL": postgres_database_url,
            "BOT_CONFIG": str(config),
            "SLACK_BOT_TOKEN": fake.bot_token,
            "SLACK_SIGNING_SECRET": "replica-test-secret",
            "SLACK_API_URL": fake.api_url,
        }
        ingest = BotProcess(dict(env), args=["ingest", "-q", str(reports)])
        await ingest.start()
        assert await ingest.wait() == 0
        expected = await dry_run_texts(env)
        assert len(expected) >= 5
        replicas = [BotProcess(dict(env)) for _ in range(2)]
        for bot in replicas:
            await bot.start()
        try:
            await until(lambda: len(fake.posted) >= 2, 60, "the digest never started")
            sender = next(b for b in replicas if b"message.sent" in bytes(b.stderr))
            await sender.kill()
            survivor = next(b for b in replicas if b is not sender)
            everything = set(expected)
            await until(
                lambda: {m.text for m in fake.posted} >= everything, 60, "the rest never arrived"
            )
        finally:
            for bot in replicas:
                await bot.kill()
        posted = [m.text for m in fake.posted]
    assert b"message.sent" in bytes(survivor.stderr), "the survivor sent the rest"
    assert set(posted) == set(expected)
    assert len(posted) - len(set(posted)) <= 1, "at most the one send in flight is repeated"


@pytest.mark.parametrize("slow_every", [0, 7], ids=["prompt", "some-answers-slow"])
async def test_two_replicas_never_exceed_telegrams_global_rate(
    postgres_database_url: str, subprocess_env: dict[str, str], tmp_path: Path, slow_every: int
) -> None:
    """With `slow_every`, every n-th chat's answer comes 2 s late: a replica's arrival
    window then holds its next sends back, and they must not leave together when it opens.

    The fake runs in a process of its own: a pause in this one (a full collection after
    hundreds of tests) would stamp the requests queued meanwhile together, a burst the
    replicas did not send."""
    from tests.fakes.telegram.remote import RemoteFake

    chats = [1_000 + n for n in range(300)]
    lines = [
        "delivery: {tick_seconds: 0.5}",
        "telegram: {webhook_url: 'https://bot.example.com/telegram/webhook'}",
        "channels:",
    ]
    lines += [
        f"  - {{name: c{chat}, platform: telegram, target: '{chat}', locale: en,"
        " schedule: '0 0 * * *', timezone: UTC}"
        for chat in chats
    ]
    config = tmp_path / "bot.yaml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stalls = {chat: 2.0 for chat in chats if slow_every and chat % slow_every == 0}
    async with RemoteFake("123456:TEST-token", chats, 1.0, tmp_path, stalls) as fake:
        env = {
            **subprocess_env,
            "BOT_DATABASE_URL": postgres_database_url,
            "BOT_CONFIG": str(config),
            "TELEGRAM_BOT_TOKEN": fake.token,
            "TELEGRAM_API_URL": fake.url,
            "TELEGRAM_WEBHOOK_SECRET": "replica-webhook-secret",
            "PTB_TIMEDELTA": "true",
        }
        ingest = BotProcess(dict(env), args=["ingest", "-q", "examples/reports"])
        await ingest.start()
        assert await ingest.wait() == 0
        replicas = [BotProcess(dict(env)) for _ in range(2)]
        for bot in replicas:
            await bot.start()
        try:

            def sent() -> int:
                return sum(bytes(bot.stderr).count(b"message.sent") for bot in replicas)

            await until(lambda: sent() >= len(chats), 90, "not every chat got its digest")
            await asyncio.sleep(1.0)  # a second send to any chat would show by now
        finally:
            for bot in replicas:
                await bot.terminate()
    per_chat = Counter(m.chat_id for m in fake.sent)
    assert set(per_chat) == set(chats) and set(per_chat.values()) == {1}, "each chat got one"
    assert fake.flood_429s == 0
    assert fake.violations_by_rule == {}
    assert all(b"message.sent" in bytes(bot.stderr) for bot in replicas), "both replicas sent"
