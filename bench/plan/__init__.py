"""Planning: 100,000 subscriptions due at one tick, over 500 new reports.

Each subscription is a chat's (one per Telegram destination, as `/subscribe` leaves them), with
one of about 300 audiences: a filter (repos, tags, excluded tags, cap) and a locale. A second
run gives the same number of subscriptions MANY_AUDIENCES distinct audiences: alike digests
render once, so that run measures what each distinct audience costs. At 09:00 the scheduler's
tick (`DigestTicker.tick`, the code `prdigest run` runs) plans every due digest into the
outbox. Figures: seconds for the whole tick, per subscription, and the peak RSS of the
process doing it (VmHWM of a process of its own, so nothing else weighs in: getrusage's
maxrss would carry over the parent's across exec), on SQLite and PostgreSQL. A full run times
REPEATS ticks per backend, each on a fresh store, and counts the median.

    python -m bench.plan [--quick] [--subs N] [--audiences N] [--backend sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import func, select, text  # noqa: E402

from bench.cpu import process_cpu, reference_seconds, server_cpu, spent  # noqa: E402
from bench.fanout.setup import chat_ids, random_filter  # noqa: E402
from bench.pg import postgres_schema  # noqa: E402
from bench.render import make_reports  # noqa: E402
from bench.rss import peak_rss_mb  # noqa: E402
from bot.core.models import Layout, Locale, Origin, Platform  # noqa: E402
from bot.core.render.limits.telegram import TELEGRAM_MAX_PER_SECOND  # noqa: E402
from bot.core.render.renderer import Renderer  # noqa: E402
from bot.core.store.reports import ReportStore  # noqa: E402
from bot.core.store.sql.db import create_engine, migrate, write_transaction  # noqa: E402
from bot.core.store.sql.tables import destinations, outbox, subscriptions  # noqa: E402
from bot.core.store.subscriptions import SubscriptionStore, filter_to_json  # noqa: E402
from bot.scheduling.tick import DigestTicker  # noqa: E402
from bot.settings import DeliveryConfig  # noqa: E402

FULL_SUBS = 100_000
QUICK_SUBS = 2_000
AUDIENCES = 300
MANY_AUDIENCES = 10_000  # the second run's: 100,000 subscriptions, 10,000 distinct audiences
QUICK_MANY = (10_000, 2_000)  # its quick run's subscriptions and audiences
NEW_REPORTS = 500
INSERT_BATCH = 5_000
AIM_SECONDS = 10.0
REPEATS = 3  # ticks per backend in a full run, each on a fresh store; the median counts
AIM_RSS_MB = 250
FIRE = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
NEXT_TICK = timedelta(seconds=DeliveryConfig().tick_seconds)  # the service's tick interval
AIM_IDLE_SECONDS = 1.0  # a tick with nothing due: at most a fifteenth of its interval


def audiences(rng: random.Random, count: int = AUDIENCES) -> list[tuple[dict[str, Any], str]]:
    """`count` distinct (filter as stored, locale) pairs."""
    found: dict[str, tuple[dict[str, Any], str]] = {}
    while len(found) < count:
        stored = filter_to_json(random_filter(rng))
        locale = rng.choice(list(Locale)).value
        found.setdefault(json.dumps([stored, locale], sort_keys=True), (stored, locale))
    return list(found.values())


async def subscribe(engine: Any, count: int, rng: random.Random, distinct: int = AUDIENCES) -> None:
    pool = audiences(rng, distinct)
    chats = chat_ids(count, rng)
    now = datetime(2026, 12, 1, tzinfo=UTC)
    for start in range(0, count, INSERT_BATCH):
        batch = chats[start : start + INSERT_BATCH]
        async with write_transaction(engine) as conn:
            first = (await conn.execute(select(func.max(destinations.c.id)))).scalar() or 0
            await conn.execute(
                destinations.insert(),
                [
                    {"platform": Platform.TELEGRAM.value, "target": str(chat), "active": True,
                     "consecutive_failures": 0, "created_at": now, "updated_at": now}
                    for chat in batch
                ],
            )  # fmt: skip
            rows = []
            for offset in range(len(batch)):
                stored, locale = rng.choice(pool)
                rows.append(
                    {"destination_id": first + 1 + offset, "number": 1, "name": "chat",
                     "origin": Origin.CHAT.value, "filters": stored, "schedule": "0 9 * * *",
                     "cadence": "daily 09:00", "timezone": "UTC", "locale": locale,
                     "layout": Layout.FLAT.value, "owner": None, "post_empty": False,
                     "locked": False, "watermark": 0, "created_at": now, "updated_at": now}
                )  # fmt: skip
            await conn.execute(subscriptions.insert(), rows)


async def analyze(engine: Any) -> None:
    """Gather the planner's statistics, as autovacuum (PostgreSQL) has long done for a store
    whose subscriptions have existed a while; what the tick itself writes (runs, members,
    outbox rows) is not analyzed before it is read."""
    if engine.dialect.name == "postgresql":
        async with engine.begin() as conn:
            await conn.execute(text("ANALYZE"))


async def filled(url: str, count: int, distinct: int) -> tuple[Any, DigestTicker]:
    """The store at `url` filled (`count` subscriptions, `distinct` audiences, NEW_REPORTS new
    reports) and analyzed, with the ticker that plans it at 09:00."""
    rng = random.Random(7422)
    engine = create_engine(url)
    await migrate(engine)
    await subscribe(engine, count, rng, distinct)
    items = make_reports(NEW_REPORTS, rng)
    await ReportStore(engine).upsert_many([(item.report, "bench") for item in items])
    await analyze(engine)
    return engine, DigestTicker(engine, SubscriptionStore(engine), Renderer(), clock=lambda: FIRE)


@asynccontextmanager
async def store_url(backend: str, name: str) -> AsyncIterator[str | None]:
    """A fresh store's URL: an SQLite file in a temporary folder, or a private PostgreSQL
    schema (None when no server answers; `name` says which benchmark skipped it)."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix=f"prdigest-{name}-") as folder:
            yield f"sqlite:///{Path(folder) / 'plan.db'}"
        return
    async with postgres_schema(name) as url:
        yield url


async def measure(url: str, count: int, distinct: int = AUDIENCES) -> dict[str, Any]:
    """Fill the store (`distinct` audiences), then time one tick at 09:00 (in this process:
    run it in its own)."""
    engine, ticker = await filled(url, count, distinct)
    first = _first_batch(ticker)
    before = peak_rss_mb(os.getpid())
    reference = reference_seconds()
    server = server_cpu(engine)
    cpu, started = process_cpu(), time.perf_counter()
    runs = await ticker.tick()
    seconds = time.perf_counter() - started
    cpu_s = spent(cpu, process_cpu())
    server_cpu_s = spent(server, server_cpu(engine))
    peak = peak_rss_mb(os.getpid())
    reference_after = reference_seconds()
    async with engine.connect() as conn:
        queued = (await conn.execute(select(func.count()).select_from(outbox))).scalar_one()
    idle = await _next_tick(engine, ticker)
    await engine.dispose()
    return {
        "subscriptions": count,
        "audiences": distinct,
        "runs": len(runs),
        "messages": int(queued),
        "seconds": round(seconds, 2),
        "per_sub_ms": round(seconds * 1000 / count, 3),
        "rss_mb": round(peak),
        "rss_before_tick_mb": round(before),
        "cpu_s": cpu_s,
        "server_cpu_s": server_cpu_s,
        "first_queued_s": None if not first else round(first[0] - started, 2),
        "reference_s": [reference, reference_after],
        **idle,
    }


async def _next_tick(engine: Any, ticker: DigestTicker) -> dict[str, Any]:
    """The service's next tick, NEXT_TICK later: every digest ran at 09:00, nothing is due
    (what every tick but one a day costs a store of daily digests)."""
    ticker.clock = lambda: FIRE + NEXT_TICK
    server = server_cpu(engine)
    cpu, started = process_cpu(), time.perf_counter()
    runs = await ticker.tick()
    return {
        "idle_seconds": round(time.perf_counter() - started, 2),
        "idle_cpu_s": spent(cpu, process_cpu()),
        "idle_server_cpu_s": spent(server, server_cpu(engine)),
        "idle_runs": len(runs),
    }


def _first_batch(ticker: DigestTicker) -> list[float]:
    """A list that gets the moment the tick's first batch of runs was committed (its outbox
    rows can be sent from then on: what the first chats wait for at 09:00)."""
    moments: list[float] = []
    told = ticker._logged

    def logged(due: Any, runs: Any) -> Any:
        if not moments and any(run.created for run in runs.values()):
            moments.append(time.perf_counter())
        return told(due, runs)

    setattr(ticker, "_logged", logged)  # noqa: B010 (a method replaced on this one object)
    return moments


def _repeated(backend: str, count: int, repeats: int, distinct: int = AUDIENCES) -> dict[str, Any]:
    """`_child` `repeats` times, each on a fresh store: the median tick, every tick's seconds
    beside it (`ticks`), and the highest peak RSS. One tick on a shared machine can take half
    as long again as the next, for nothing the code did."""
    extra = () if distinct == AUDIENCES else (distinct,)
    found = [_child(backend, count, *extra) for _ in range(repeats)]
    if "skipped" in found[0]:
        return found[0]
    median = sorted(found, key=lambda figures: figures["seconds"])[len(found) // 2]
    return median | {
        "ticks": [figures["seconds"] for figures in found],
        "rss_mb": max(figures["rss_mb"] for figures in found),
    }


def _child(backend: str, count: int, distinct: int = AUDIENCES) -> dict[str, Any]:
    """`measure` in a process of its own (its peak RSS is the planning's alone)."""
    argv = [sys.executable, "-m", "bench.plan", "--child", "--backend", backend]
    argv += ["--subs", str(count), "--audiences", str(distinct)]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench.plan {backend} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.splitlines()[-1]))


def run(quick: bool = False, count: int | None = None) -> dict[str, Any]:
    """Both backends, each tick in a process of its own, REPEATS ticks each (one when quick):
    the median counts. The keys the issue names (`seconds_100k_sqlite`, `seconds_100k_pg`) say
    how many subscriptions were planned."""
    count = count or (QUICK_SUBS if quick else FULL_SUBS)
    repeats = 1 if quick else REPEATS
    figures: dict[str, Any] = {"sqlite": _repeated("sqlite", count, repeats)}
    figures["postgresql"] = _repeated("postgresql", count, repeats)
    sqlite, pg = figures["sqlite"], figures["postgresql"]
    figures["per_sub_ms"] = sqlite["per_sub_ms"]
    figures["seconds_sqlite"] = figures[f"seconds_{_size(count)}_sqlite"] = sqlite["seconds"]
    if "skipped" not in pg:
        figures["seconds_pg"] = figures[f"seconds_{_size(count)}_pg"] = pg["seconds"]
    figures["rss_mb"] = max(sqlite["rss_mb"], pg.get("rss_mb", 0))
    figures["subscriptions"] = count
    figures["aim_seconds"] = AIM_SECONDS
    figures["aim_rss_mb"] = AIM_RSS_MB
    return figures | _many(quick, repeats)


def _many(quick: bool, repeats: int) -> dict[str, Any]:
    """The run with many distinct audiences (fewer when quick: QUICK_MANY); its keys keep the
    full run's names, and `many` says how many subscriptions and audiences were planned."""
    count, distinct = QUICK_MANY if quick else (FULL_SUBS, MANY_AUDIENCES)
    sqlite = _repeated("sqlite", count, repeats, distinct)
    pg = _repeated("postgresql", count, repeats, distinct)
    figures: dict[str, Any] = {
        "many": {"subscriptions": count, "audiences": distinct, "sqlite": sqlite, "postgresql": pg},
        "seconds_10k_audiences_sqlite": sqlite["seconds"],
        "rss_mb_10k_audiences": max(sqlite["rss_mb"], pg.get("rss_mb", 0)),
    }
    if "skipped" not in pg:
        figures["seconds_10k_audiences_pg"] = pg["seconds"]
    return figures


def _size(count: int) -> str:
    return f"{count // 1000}k" if count % 1000 == 0 else str(count)


def summary(figures: dict[str, Any]) -> list[tuple[str, str, str, bool | None]]:
    """The headline rows: seconds on each backend, peak RSS (aims are for 100,000), then the
    same for the run with many audiences."""
    return _summary(figures) + _many_summary(figures)


def _summary(figures: dict[str, Any]) -> list[tuple[str, str, str, bool | None]]:
    n = f"{figures['subscriptions']:,}"
    pg = figures.get("seconds_pg")
    return [
        (f"plan {n} subscriptions, SQLite", f"{figures['seconds_sqlite']:.2f} s",
         f"≤ {AIM_SECONDS:g} s", figures["seconds_sqlite"] <= AIM_SECONDS),
        (f"plan {n} subscriptions, PostgreSQL", "skipped" if pg is None else f"{pg:.2f} s",
         f"≤ {AIM_SECONDS:g} s", None if pg is None else pg <= AIM_SECONDS),
        ("plan peak RSS", f"{figures['rss_mb']:,.0f} MB", f"≤ {AIM_RSS_MB} MB",
         figures["rss_mb"] <= AIM_RSS_MB),
        *_idle_summary(figures, n),
    ]  # fmt: skip


def _idle_summary(figures: dict[str, Any], n: str) -> list[tuple[str, str, str, bool | None]]:
    """The next tick, with nothing due, on each backend that ran."""
    rows: list[tuple[str, str, str, bool | None]] = []
    for name, label in (("sqlite", "SQLite"), ("postgresql", "PostgreSQL")):
        idle = figures[name].get("idle_seconds")
        if idle is not None:
            what = f"a tick with nothing due, {n} subscriptions, {label}"
            rows.append(
                (what, f"{idle:.2f} s", f"≤ {AIM_IDLE_SECONDS:g} s", idle <= AIM_IDLE_SECONDS)
            )
    return rows


def _many_summary(figures: dict[str, Any]) -> list[tuple[str, str, str, bool | None]]:
    """The run with many audiences: the same aims (for 100,000 subscriptions, 10,000
    audiences)."""
    many = figures.get("many")
    if many is None:
        return []
    what = f"plan {many['subscriptions']:,} subscriptions, {many['audiences']:,} audiences"
    sqlite, pg = figures["seconds_10k_audiences_sqlite"], figures.get("seconds_10k_audiences_pg")
    rss = figures["rss_mb_10k_audiences"]
    return [
        (f"{what}, SQLite", f"{sqlite:.2f} s", f"≤ {AIM_SECONDS:g} s", sqlite <= AIM_SECONDS),
        (f"{what}, PostgreSQL", "skipped" if pg is None else f"{pg:.2f} s",
         f"≤ {AIM_SECONDS:g} s", None if pg is None else pg <= AIM_SECONDS),
        (f"plan peak RSS, {many['audiences']:,} audiences", f"{rss:,.0f} MB",
         f"≤ {AIM_RSS_MB} MB", rss <= AIM_RSS_MB),
    ]  # fmt: skip


def _rows(figures: dict[str, Any]) -> list[str]:
    """One table row per backend."""
    rows = []
    for name in ("sqlite", "postgresql"):
        f = figures[name]
        if "skipped" in f:
            rows.append(f"| {name} | skipped: {f['skipped']} | | | | | | | | | |")
            continue
        ticks = " / ".join(f"{seconds:.2f}" for seconds in f.get("ticks", [f["seconds"]]))
        cpu = " / ".join(_cpu(f.get(key)) for key in ("cpu_s", "server_cpu_s"))
        first = f.get("first_queued_s")
        reference = " / ".join(f"{seconds:.2f}" for seconds in f.get("reference_s", ()))
        rows.append(
            f"| {name} | {f['runs']:,} | {f['messages']:,} | {f['seconds']:.2f} | {ticks} "
            f"| {cpu} | {'—' if first is None else f'{first:.2f}'} | {reference or '—'} "
            f"| {f['per_sub_ms']:.3f} | {f['rss_mb']:,} | {_seconds(f.get('idle_seconds'))} |"
        )
    return rows


def _cpu(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds:.1f}"


def _seconds(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds:.2f}"


DESIGN = (
    "How a tick plans, in three steps. *Match by terms*: the window's reports are numbered, "
    "and each distinct term of the due filters (`tag:rollout`, `repo:verl`, `impact>=high`…) "
    "is asked of them once, as a bitset (a Python int, bit i for report i; "
    "`bot/core/digest/terms.py`); a filter is then a few AND/OR/NOT of those ints, and "
    "filters that keep the same reports share one list. *Render fragments once*: each "
    "entry is rendered once per report, platform, locale and style (its tag, verbosity, "
    "whether it names its repo) and each `[tag]` heading once per locale "
    "(`bot/core/render/flow.py`); an audience's digest is built once "
    "(`bot/core/delivery/editions.py`) and its messages are assembled from those fragments "
    "(its header, then pieces packed greedily into messages under the platform's limits), so "
    "what an extra audience costs is its header, its packing and its rows. *Stream the "
    "editions*: destinations are planned 1,000 per transaction, and each batch writes the "
    "editions it rendered (messages and entries, a few statements: rows through the "
    "driver's executemany, the entries on PostgreSQL as one array per column, "
    "`bot/core/store/editions.py`) before the next one "
    "starts; what the tick keeps across batches is each edition's id and message placement, "
    "not its payloads. An edition stores the entries it shows a row each (reading marks and "
    'reactions look them up by PR) and the PRs behind its "+N more" as one list on its own '
    "row: over 500 new reports, 10,000 audiences kept 590,000 of those. Batches planned at "
    "once (two on PostgreSQL) share one read of the window, so everything keyed by its "
    "reports (picks, digests, rendered entries) is worked out once. While a batch builds and "
    "renders, it hands the event loop to other tasks every few milliseconds (`Breather`), so "
    "the chat's answers keep flowing."
)

HEAD = [
    "| backend | runs | outbox rows | seconds (median) | each tick (s) "
    "| CPU s: process / server | first queued (s) | reference (s) | ms per subscription "
    "| peak RSS (MB) | next tick, nothing due (s) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
]
CPU_NOTE = (
    "CPU s: what the median tick cost in CPU seconds, in the planning process (all its "
    "threads) and in the PostgreSQL server (every `postgres` process; — on SQLite, which "
    "runs inside the process). A tick cannot take less wall time than the two together "
    "divided by the machine's CPUs, nor less than the process's share that runs on one thread "
    "(the one holding Python's GIL: most of it). First queued: when the tick's first batch "
    "of runs was committed, from which moment its chats' messages can be sent (what the "
    "first chats wait for at 09:00). Reference: the fastest of three timings of a fixed "
    "pure-Python workload (`bench/cpu.py`), in the tick's process just before and just after "
    "the tick: how fast the machine ran Python then. It moves by half within a minute here, "
    "so it shows a tick that ran on a slow machine; it is not a factor to divide by. "
    "Next tick: the service's following tick, one `delivery.tick_seconds` later, when every "
    "digest ran at 09:00 and nothing is due (what every other tick of the day costs): it reads "
    "only the subscriptions that may be due (a `now` one, or one whose runs have not reached "
    "its schedule's latest fire; `bot/scheduling/tick.py`), so it costs little whatever "
    "the store holds. The aim, a second, is this project's: a fifteenth of the interval."
)


def section(figures: dict[str, Any]) -> list[str]:
    """The docs/benchmarks.md section."""
    return [
        f"## Planning: {figures['subscriptions']:,} subscriptions due at one tick",
        "",
        f"Each subscription is a Telegram chat's, with one of about {AUDIENCES} audiences (a "
        f"filter and a locale); {NEW_REPORTS} new reports. One scheduler tick plans every "
        "digest into the outbox: destinations 1,000 per transaction, each filter's new reports "
        "picked by terms (every distinct term of the due filters asked once of the window, a "
        "filter a few set operations), each audience rendered once and stored once (an "
        "edition), each chat's messages an outbox row pointing at it. "
        "The store is analyzed once filled (on PostgreSQL, as autovacuum would have for "
        "subscriptions that exist a while); what the tick writes is not. "
        "Each tick runs in a process of its own, on a store of its own; a full run times "
        f"{REPEATS} ticks per backend and counts the median (the machines here share their "
        "CPUs: one tick can take half as long again as the next); RSS is the highest peak.",
        "",
        DESIGN,
        "",
        *HEAD,
        *_rows(figures),
        "",
        CPU_NOTE,
        "",
        *_many_section(figures),
    ]


def _many_section(figures: dict[str, Any]) -> list[str]:
    many = figures.get("many")
    if many is None:
        return []
    return [
        f"The same tick with {many['audiences']:,} distinct audiences among "
        f"{many['subscriptions']:,} subscriptions (each audience renders its own edition):",
        "",
        *HEAD,
        *_rows(many),
        "",
        *_sending(many),
    ]


def _sending(figures: dict[str, Any]) -> list[str]:
    """What the planned messages take to send at Telegram's overall pace, beside the tick."""
    sqlite = figures["sqlite"]
    seconds = sqlite["messages"] / TELEGRAM_MAX_PER_SECOND
    hours, minutes = divmod(round(seconds / 60), 60)
    return [
        f"Sending the {sqlite['messages']:,} messages this tick queues takes at least {hours} h "
        f"{minutes:02d} min at Telegram's overall pace for a bot ({TELEGRAM_MAX_PER_SECOND:g} "
        "messages a second, `bot/core/render/limits/telegram.py`). The deliverer sends a batch's "
        "messages as soon as the batch is committed, so the tick's seconds pass while the "
        "first batches are sent: the first chats wait for the first-queued column, the last "
        "one for the sending.",
        "",
    ]


async def _child_main(backend: str, count: int, distinct: int) -> dict[str, Any]:
    async with store_url(backend, "plan") as url:
        if url is None:
            return {"skipped": "no PostgreSQL answered"}
        return await measure(url, count, distinct)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.plan", description=__doc__)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SUBS:,} subscriptions")
    parser.add_argument("--subs", type=int, default=None)
    parser.add_argument("--audiences", type=int, default=AUDIENCES, help="distinct audiences")
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    count = args.subs or (QUICK_SUBS if args.quick else FULL_SUBS)
    if args.child:
        print(json.dumps(asyncio.run(_child_main(args.backend, count, args.audiences))))
    elif args.backend:
        print(json.dumps(_child(args.backend, count, args.audiences), indent=2))
    else:
        print(json.dumps(run(args.quick, count), indent=2))
