"""Fan-out across replicas: 10,000 Telegram chats, three `Deliverer` processes, PostgreSQL.

The store (a private schema on the local PostgreSQL) holds 10,000 chat subscriptions whose
digests of 500 new reports are queued (as `bench.fanout` does on SQLite). Three replica
processes, each the production `Deliverer` + `TelegramSender`, claim from that one outbox and
share Telegram's overall pace through the database (`SharedPace`), against the strict fake Bot
API in a process of its own. Time is scaled as in `bench.fanout` (TIME_SCALE). Figures: the
achieved rate ÷ the allowed one, 429s provoked, lost and duplicated messages.

    python -m bench.fanout.pg [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from asyncio.subprocess import Process
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.fanout.setup import NEW_REPORTS, prepare  # noqa: E402
from bench.fanout.telegram import (  # noqa: E402
    QUICK_CHATS,
    TIME_SCALE,
    drain,
    fake_telegram,
    figures,
    scaled_sender,
)
from bench.pg import postgres_schema  # noqa: E402
from bot.core.store.sql.db import create_engine  # noqa: E402

REPLICAS = 3
FULL_CHATS = 10_000
AIM_RATE_RATIO = 0.90


async def replica(url: str, api_url: str, scale: float, name: str) -> None:
    """One replica: deliver until the shared outbox is empty."""
    engine = create_engine(url)
    try:
        await drain(engine, scaled_sender(api_url, scale), name)
    finally:
        await engine.dispose()


async def start_replicas(url: str, api_url: str, scale: float) -> list[Process]:
    """REPLICAS processes, each delivering until the shared outbox is empty (the fault suite
    starts them this way too, to pause them)."""
    procs = []
    for n in range(REPLICAS):
        argv = ["-m", "bench.fanout.pg", "--replica", url, api_url, str(scale), f"replica-{n}"]
        procs.append(await asyncio.create_subprocess_exec(sys.executable, *argv, cwd=ROOT))
    return procs


async def finished(procs: list[Process]) -> None:
    """Once every replica has exited; RuntimeError if one failed."""
    codes = await asyncio.gather(*(proc.wait() for proc in procs))
    if any(codes):
        raise RuntimeError(f"a replica failed: exit codes {codes}")


async def replicas(url: str, api_url: str, scale: float) -> float:
    """REPLICAS processes delivering at once; wall seconds until all are done."""
    started = time.perf_counter()
    await finished(await start_replicas(url, api_url, scale))
    return time.perf_counter() - started


async def measure(url: str, chats: int, scale: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="prdigest-fanout-pg-") as tmp:
        engine, messages, notes = await prepare(Path(tmp), chats, url=url)
        await engine.dispose()
        async with fake_telegram(messages, scale, Path(tmp)) as fake:
            wall = await replicas(url, fake.url, scale)
        found = figures(fake, messages, scale, wall)
    return {
        "chats": chats,
        "reports": NEW_REPORTS,
        "replicas": REPLICAS,
        "time_scale": scale,
        **notes,
        **found,
        "aim": AIM_RATE_RATIO,
    }


async def run_async(quick: bool) -> dict[str, Any]:
    async with postgres_schema("fanout_pg") as url:
        if url is None:
            return {"skipped": "no PostgreSQL answered"}
        return await measure(url, QUICK_CHATS if quick else FULL_CHATS, TIME_SCALE)


def run(quick: bool = False) -> dict[str, Any]:
    return asyncio.run(run_async(quick))


def section(f: dict[str, Any]) -> list[str]:
    title = f"## Fan-out across {REPLICAS} replicas on PostgreSQL"
    if "skipped" in f:
        return [title, "", f"Skipped: {f['skipped']}.", ""]
    return [
        title,
        "",
        f"{f['chats']:,} Telegram chat subscriptions, {f['reports']} new reports, the digests "
        f"queued ({f['plan_seconds']:.0f} s to plan, {f['plan_digest_ms']:.1f} ms a chat) in one "
        f"PostgreSQL outbox; {REPLICAS} processes deliver it at once, sharing Telegram's overall "
        f"pace through the database, to the strict fake (time ×{f['time_scale']}: "
        f"{f['allowed_per_s']:.0f} messages/s allowed). A replica whose booked slot has passed "
        "when its turn comes (a late wake-up, a process descheduled) leaves it empty and books "
        "another rather than land on another replica's; the fault suite runs a smaller fan-out "
        "while stopping the replicas at random (`tests/faults/test_paused_replicas.py`).",
        "",
        "| messages | seconds | achieved /s | ÷ allowed | aim | 429s | lost | duplicates |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {f['messages']:,} | {f['seconds']:.0f} | {f['achieved_per_s']:.1f} "
        f"| {f['rate_ratio']:.3f} | ≥ {AIM_RATE_RATIO} | {f['violations']} | {f['lost']} "
        f"| {f['duplicates']} |",
        "",
    ]


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--replica":
        _, _, url, api_url, scale, name = sys.argv
        asyncio.run(replica(url, api_url, float(scale), name))
        return
    parser = argparse.ArgumentParser(prog="python -m bench.fanout.pg", description=__doc__)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_CHATS:,} chats")
    print(json.dumps(run(parser.parse_args().quick), indent=2))


if __name__ == "__main__":
    main()
