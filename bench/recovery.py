"""Recovery: a replica killed inside a send, and how soon another takes its claims over.

Two `prdigest run` replicas share a PostgreSQL store (a private schema on the local server)
and deliver catch-up digests to Slack channels (the strict fake, in this process). Right after
the fake accepts a post, the replica holding claims is SIGKILLed. Its claimed rows are leased
for 60 s; the other replica must take them over as soon as the dead one's heartbeat expires
(bot/core/delivery/heartbeat.py). Figure: seconds from the kill until every row the dead
replica held is sent (`claims_resume_s`, aim ≤ 5 s), and lost / duplicated messages (a send in
flight at the kill may arrive twice: at most one per row it held).

    python -m bench.recovery [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import select  # noqa: E402

from bench.pg import postgres_schema  # noqa: E402
from bot.core.store.sql.db import create_engine  # noqa: E402
from bot.core.store.sql.tables import outbox  # noqa: E402
from bot.core.store.statuses import RowStatus  # noqa: E402
from tests.fakes.slack.api import FakeSlack  # noqa: E402
from tests.kits.proc import (  # noqa: E402
    BotProcess,
    run_cli,
    write_json_reports,
)
from tests.kits.servers import clean_env  # noqa: E402

CHANNELS = 8
REPORTS = 80
AIM_SECONDS = 5.0
FINISH_SECONDS = 120.0


def write_inputs(folder: Path, channels: int) -> Path:
    write_json_reports(folder / "reports", REPORTS, 40_000, "[rollout] fix: recovery change {n}")
    lines = ["timezone: UTC", "locale: en", "channels:"]
    lines += [
        f"  - {{name: team{n}, platform: slack, target: C0REC{n}, max_items: 500,"
        " schedule: '* * * * *'}"
        for n in range(channels)
    ]
    config = folder / "bot.yaml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


async def held_by(url: str, worker_pid: int) -> set[int]:
    """Rows a replica (by its pid) holds claimed right now."""
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                select(outbox.c.id).where(
                    outbox.c.status == RowStatus.SENDING.value,
                    outbox.c.claimed_by.like(f"%:{worker_pid}"),
                )
            )
            return {int(r) for r in rows.scalars()}
    finally:
        await engine.dispose()


async def unsent(url: str, ids: set[int]) -> int:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                select(outbox.c.id).where(
                    outbox.c.id.in_(ids), outbox.c.status != RowStatus.SENT.value
                )
            )
            return len(rows.all())
    finally:
        await engine.dispose()


async def kill_in_a_send(url: str, fake: FakeSlack, victim: BotProcess) -> tuple[float, set[int]]:
    """SIGKILL `victim` right after the fake accepted a post while it holds claims."""
    assert victim.proc is not None
    deadline = time.monotonic() + FINISH_SECONDS
    seen = len(fake.posted)
    while True:
        assert time.monotonic() < deadline, "the victim never held a claim"
        if len(fake.posted) > seen:
            held = await held_by(url, victim.proc.pid)
            if held:
                await victim.kill()
                return time.monotonic(), held
            seen = len(fake.posted)
        await asyncio.sleep(0.005)


async def measure(url: str, folder: Path, channels: int) -> dict[str, Any]:
    config = write_inputs(folder, channels)
    env = clean_env(BOT_DATABASE_URL=url, BOT_CONFIG=str(config))
    await run_cli(env, "ingest", "-q", str(folder / "reports"))
    async with FakeSlack() as fake:
        for n in range(channels):
            fake.add_channel(f"C0REC{n}")
        env.update(SLACK_BOT_TOKEN=fake.bot_token, SLACK_API_URL=fake.api_url)
        env["SLACK_SIGNING_SECRET"] = "bench-recovery-secret"
        replicas = [BotProcess(dict(env)) for _ in range(2)]
        for replica in replicas:
            await replica.start()
        try:
            for replica in replicas:
                await replica.wait_ready(timeout=60)
            killed_at, held = await kill_in_a_send(url, fake, replicas[0])
            while await unsent(url, held):
                assert time.monotonic() - killed_at < FINISH_SECONDS, "claims never taken over"
                await asyncio.sleep(0.02)
            resume = time.monotonic() - killed_at
            await replicas[1].terminate(timeout=30)
        finally:
            for replica in replicas:
                if replica.proc is not None and replica.proc.returncode is None:
                    await replica.kill()
        posts = [m for m in fake.posted if m.method == "chat.postMessage"]
        unique = {(m.channel, m.text) for m in posts}
    return {
        "claims_resume_s": round(resume, 2),
        "rows_held_at_kill": len(held),
        "messages": len(posts),
        "duplicates": len(posts) - len(unique),
        "aim_s": AIM_SECONDS,
    }


async def run_async(quick: bool) -> dict[str, Any]:
    async with postgres_schema("recovery") as url:
        if url is None:
            return {"skipped": "no PostgreSQL answered"}
        with tempfile.TemporaryDirectory(prefix="prdigest-recovery-") as folder:
            return await measure(url, Path(folder), 4 if quick else CHANNELS)


def run(quick: bool = False) -> dict[str, Any]:
    return asyncio.run(run_async(quick))


def section(figures: dict[str, Any]) -> list[str]:
    """The docs/benchmarks.md section."""
    if "skipped" in figures:
        return [
            "## Recovery: a replica killed inside a send",
            "",
            f"Skipped: {figures['skipped']}.",
            "",
        ]
    return [
        "## Recovery: a replica killed inside a send",
        "",
        "Two `prdigest run` replicas on PostgreSQL deliver catch-up digests to "
        f"{CHANNELS} Slack channels (the strict fake); right after a post, the replica holding "
        "claims is SIGKILLed. Its rows are leased for 60 s; the other replica frees them as soon "
        "as it knows the holder is dead: here at once, since both run on this host and the "
        "killed pid is gone; a replica on another host frees them once it has watched the dead "
        "one's heartbeat (renewed every second) stand still for 4 s.",
        "",
        "| rows held at the kill | seconds until all were sent | aim | messages | duplicates |",
        "|---|---|---|---|---|",
        f"| {figures['rows_held_at_kill']} | {figures['claims_resume_s']:.2f} | ≤ {AIM_SECONDS:g} "
        f"| {figures['messages']} | {figures['duplicates']} |",
        "",
        "A duplicate is a post the dead replica had sent when it was killed, before it could "
        "record it: at most one per row it held.",
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.recovery", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="4 channels instead of 8")
    print(json.dumps(run(parser.parse_args().quick), indent=2))


if __name__ == "__main__":
    main()
