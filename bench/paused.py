"""Replicas stopped and continued at random moments: the 3-replica fan-out of
`bench.fanout.pg` (one PostgreSQL outbox, the shared pace, the strict fake Bot API in its own
process) runs while this process stops each replica with SIGSTOP at random moments and
continues it with SIGCONT a moment later. The fault suite runs it as a process and checks
its figures (tests/faults/test_paused_replicas.py).

    python -m bench.paused --url postgresql+psycopg://… --chats 40 [--seed S]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import signal
import sys
import tempfile
from asyncio.subprocess import Process
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.fanout.pg import REPLICAS, finished, start_replicas  # noqa: E402
from bench.fanout.setup import prepare  # noqa: E402
from bench.fanout.telegram import TIME_SCALE, fake_telegram, figures  # noqa: E402

RUNNING = (0.05, 0.5)  # seconds a replica runs between two stops
STOPPED = (0.005, 0.4)  # seconds a stop lasts: well under the heartbeat's 4 s
FINISH_SECONDS = 300.0


@dataclass
class Stops:
    count: int = 0
    seconds: float = 0.0
    longest: float = 0.0
    by_replica: list[int] = field(default_factory=list)


async def stop_at_random(proc: Process, rng: random.Random, stops: Stops) -> None:
    """SIGSTOP `proc` at random moments, SIGCONT it a random moment later, until it exits."""
    mine = 0
    try:
        while proc.returncode is None:
            await asyncio.sleep(rng.uniform(*RUNNING))
            pause = rng.uniform(*STOPPED)
            proc.send_signal(signal.SIGSTOP)
            try:
                await asyncio.sleep(pause)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGCONT)
            mine += 1
            stops.count += 1
            stops.seconds += pause
            stops.longest = max(stops.longest, pause)
    except ProcessLookupError:
        pass  # it exited between two looks
    finally:
        stops.by_replica.append(mine)


async def deliver_with_stops(url: str, api_url: str, seed: str, stops: Stops) -> float:
    """Run the replicas to the end under random stops; wall seconds."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    procs = await start_replicas(url, api_url, TIME_SCALE)
    stoppers = [
        asyncio.create_task(stop_at_random(p, random.Random(f"{seed}-{n}"), stops))
        for n, p in enumerate(procs)
    ]
    try:
        await asyncio.wait_for(finished(procs), FINISH_SECONDS)
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                if proc.returncode is None:
                    proc.send_signal(signal.SIGCONT)
                    proc.kill()
        await asyncio.gather(*stoppers, return_exceptions=True)
        await asyncio.gather(*(p.wait() for p in procs))
    return loop.time() - started


async def measure(url: str, chats: int, seed: str) -> dict[str, Any]:
    """The fan-out of `chats` under random stops: the fake's figures and the stops'."""
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        engine, messages, _ = await prepare(tmp, chats, url=url)
        await engine.dispose()
        stops = Stops()
        async with fake_telegram(messages, TIME_SCALE, tmp) as fake:
            wall = await deliver_with_stops(url, fake.url, seed, stops)
        found = figures(fake, messages, TIME_SCALE, wall)
    stopped = {"count": stops.count, "by_replica": stops.by_replica}
    stopped |= {"seconds": round(stops.seconds, 1), "longest": round(stops.longest, 2)}
    return {**found, "replicas": REPLICAS, "stops": stopped}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.paused", description=__doc__)
    parser.add_argument("--url", required=True, help="a PostgreSQL database URL")
    parser.add_argument("--chats", type=int, default=40)
    parser.add_argument("--seed", default="paused")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(measure(args.url, args.chats, f"{args.seed}-{args.chats}"))))


if __name__ == "__main__":
    main()
