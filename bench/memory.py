"""Memory: peak RSS of `prdigest run` serving a store of 100,000 reports.

The store holds reports shaped like `bench.ingest.generate` makes them (the seed report with
varied repos, numbers, tag modules, impact, a fifth of them long). `prdigest run` starts on it
with one console channel whose digest fires at start (catch-up) and goes to a file, and Slack
enabled against the loopback fake; after the first digest is written and a few signed `/pr`
commands are answered, the process's peak RSS (VmHWM in /proc) is read.

    python -m bench.memory [--quick]     # --quick: 10,000 reports
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import ingest  # noqa: E402
from bench.rss import peak_rss_mb  # noqa: E402
from bot.core.reports.model import Report  # noqa: E402
from bot.core.reports.parse.parser import parse_file  # noqa: E402
from bot.core.store.reports import WINDOW_LIMIT, ReportStore  # noqa: E402
from bot.core.store.sql.db import create_engine, migrate  # noqa: E402
from tests.fakes.slack.api import FakeSlack  # noqa: E402
from tests.kits.servers import Server, SignedSlack  # noqa: E402

TEMPLATES = 400  # distinct generated reports; the store cycles through them
BATCH = 2_000
LOOKUPS = 20
AIM_RSS_MB = 150  # issue 19 (was 200)


def templates(folder: Path) -> list[Report]:
    """Reports parsed from `ingest.generate` files: the shapes the store is filled with."""
    ingest.generate(folder, TEMPLATES, seed=11)
    return [parse_file(path).report for path in sorted(folder.glob("*.md"))]


def variant(base: Report, number: int, rng: random.Random) -> Report:
    url = str(base.url or "").rsplit("/", 1)[0] + f"/{number}"
    return base.model_copy(
        update={
            "repo": rng.choice(ingest.REPOS),
            "number": number,
            "url": url,
            "title": f"{base.title.split(' #')[0]} #{number}",
        }
    )


async def fill_store(url: str, count: int, folder: Path) -> float:
    """Write `count` reports (numbers 1..count) into a fresh store; seconds taken."""
    started = time.perf_counter()
    engine = create_engine(url)
    await migrate(engine)
    store = ReportStore(engine)
    shapes = templates(folder)
    rng = random.Random(count)
    try:
        for first in range(1, count + 1, BATCH):
            numbers = range(first, min(count, first + BATCH - 1) + 1)
            batch = [(variant(shapes[n % len(shapes)], n, rng), "bench") for n in numbers]
            await store.upsert_many(batch)
    finally:
        await engine.dispose()
    return time.perf_counter() - started


def build_store(folder: Path, count: int) -> tuple[Path, float]:
    """A SQLite file with `count` reports (built once per bench run, then copied)."""
    db = folder / f"store-{count}.db"
    if db.exists():
        return db, 0.0
    seconds = asyncio.run(fill_store(f"sqlite:///{db}", count, folder / "templates"))
    return db, seconds


def copy_store(db: Path, folder: Path) -> Path:
    """A fresh copy of the store (and of its WAL, if any) as `folder/bot.db`."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    target = folder / "bot.db"
    for suffix in ("", "-wal"):
        source = db.with_name(db.name + suffix)
        if source.exists():
            shutil.copyfile(source, target.with_name(target.name + suffix))
    return target


# Daily at midnight UTC: whenever the benchmark runs, the channel's latest fire is on the day
# it is made, so its first digest is due at once, covering the day before (every report just
# stored). A fire on an earlier day than the channel's own is never caught up (`predates`):
# at 09:00 the benchmark got no digest when run before 09:00 UTC.
SCHEDULE = "0 0 * * *"
DIGEST_WAIT = 600.0  # seconds the first start has to write its digest


def console_config(folder: Path, digest_file: Path) -> Path:
    config = folder / "bot.yaml"
    config.write_text(
        "timezone: UTC\n"
        "channels:\n"
        f"  - {{name: memory, platform: console, target: '{digest_file}',"
        f" schedule: '{SCHEDULE}', locale: en, max_items: 30}}\n",
        encoding="utf-8",
    )
    return config


def digest_written(path: Path) -> bool:
    return path.exists() and "#" in path.read_text("utf-8")


async def lookups(slack: SignedSlack, url: str, count: int) -> None:
    rng = random.Random(5)
    for _ in range(LOOKUPS):
        await slack.command(url, f"{rng.randint(1, count)}", wait_answer=True)


async def first_start(
    slack: SignedSlack, env: dict[str, str], digest: Path, count: int
) -> dict[str, Any]:
    """Start on the store, wait for the catch-up digest in the file, answer a few `/pr`."""
    server = Server(env, logs=digest.parent / "logs-first")
    await server.start()
    try:
        started = time.perf_counter()
        await server.wait_ready(within=600)
        ready = time.perf_counter() - started
        while not digest_written(digest):
            await server.check_alive()
            if time.perf_counter() - started > DIGEST_WAIT:
                raise TimeoutError(f"no digest in {digest} {DIGEST_WAIT:.0f} s after the start")
            await asyncio.sleep(0.1)
        first_digest = time.perf_counter() - started
        after_digest = peak_rss_mb(server.pid)
        await lookups(slack, server.url, count)
        return {
            "ready_seconds": round(ready, 1),
            "first_digest_seconds": round(first_digest, 1),
            "rss_mb_after_digest": round(after_digest, 1),
            "rss_mb": round(peak_rss_mb(server.pid), 1),
        }
    finally:
        await server.stop(within=60)


async def steady_start(slack: SignedSlack, env: dict[str, str], folder: Path, count: int) -> float:
    """Start again on the same store (the digest already delivered): peak RSS after `/pr`s."""
    server = Server(env, logs=folder / "logs-steady")
    await server.start()
    try:
        await server.wait_ready(within=600)
        await asyncio.sleep(1)  # the scheduler's first tick: nothing new to plan
        await lookups(slack, server.url, count)
        return round(peak_rss_mb(server.pid), 1)
    finally:
        await server.stop(within=60)


async def measure(db: Path, count: int, folder: Path) -> dict[str, Any]:
    digest = folder / "digest.txt"
    async with FakeSlack() as fake:
        slack = SignedSlack(fake)
        env = slack.env(db, console_config(folder, digest))
        first = await first_start(slack, env, digest, count)
        steady = await steady_start(slack, env, folder, count)
    return {
        "reports": count,
        **first,
        "rss_mb_steady": steady,
        "lookups": LOOKUPS,
        "aim_mb": AIM_RSS_MB,
    }


FULL_REPORTS = 100_000
QUICK_REPORTS = 10_000  # the store the memory and latency benchmarks share, in a quick run


def run(quick: bool = False, work: Path | None = None) -> dict[str, Any]:
    count = QUICK_REPORTS if quick else FULL_REPORTS
    with tempfile.TemporaryDirectory() as tmp:
        base = work or Path(tmp)
        db, build_seconds = build_store(base, count)
        run_dir = base / "memory"
        figures = asyncio.run(measure(copy_store(db, run_dir), count, run_dir))
    return {**figures, "store_build_seconds": round(build_seconds, 1)}


def section(figures: dict[str, Any]) -> list[str]:
    """The docs/benchmarks.md section."""
    return [
        f"## Memory: `prdigest run` on {figures['reports']:,} reports",
        "",
        "| moment | peak RSS (MB) |",
        "|---|---:|",
        f"| first start, after a new channel's catch-up digest (the newest "
        f"{WINDOW_LIMIT:,} of {figures['reports']:,} reports; "
        f"{figures['first_digest_seconds']:.0f} s after start) "
        f"| {figures['rss_mb_after_digest']:,.0f} |",
        f"| … and {figures['lookups']} `/pr` lookups | {figures['rss_mb']:,.0f} |",
        f"| second start (digest delivered, nothing new) and {figures['lookups']} `/pr` "
        f"lookups | {figures['rss_mb_steady']:,.0f} |",
        "",
        f"**Peak RSS {figures['rss_mb']:,.0f} MB** (aim ≤ {figures['aim_mb']} MB): VmHWM of the "
        "`prdigest run` process, SQLite store, one console channel (new, so its first digest "
        f"covers the newest {WINDOW_LIMIT:,} stored reports, the cap of a digest window), "
        "Slack enabled against the fake for the `/pr` commands. "
        f"The store is filled in {figures['store_build_seconds']:.0f} s from "
        f"{TEMPLATES} reports generated like the ingest benchmark's, varied in repo, number "
        "and title.",
        "",
        "The second start is what the process holds once started (mostly imported code: "
        "SQLAlchemy, alembic for the start-up migration check, slack_bolt with aiohttp, "
        "pydantic); the first start's "
        f"{figures['rss_mb_after_digest'] - figures['rss_mb_steady']:,.0f} MB more is the "
        f"catch-up digest, nearly all of it the window's {WINDOW_LIMIT:,} parsed reports, which "
        'every entry of the run (shown, or kept for "+N more") refers to until it is queued.',
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 reports instead of 100,000")
    print(json.dumps(run(parser.parse_args().quick), indent=2))


if __name__ == "__main__":
    main()
