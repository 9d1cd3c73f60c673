"""Command latency while a big tick plans: `/pr 7422` answered idle, then during a tick.

`prdigest run` answers the chat and runs the digest tick on one event loop. Here both run in
one process on one SQLite store, as there: the chat's answer (`Answerer.answer` for
`/pr 7422`, then its rendering for Telegram: what an adapter does before it replies) and the
scheduler's tick (`DigestTicker.tick`) planning 100,000 subscriptions with 10,000 distinct
audiences (`bench.plan`'s store; quick: 10,000 and 2,000). CLIENTS clients each ask, wait
for the answer, pause PAUSE_SECONDS and ask again: first for IDLE_SECONDS with nothing else
running, then for as long as one tick takes. The figure is the p99 during the tick over the
p99 idle (aim ≤ AIM_P99_RATIO, `bench/latency.py`'s): a tick that holds the loop shows as
answers that wait for it.

    python -m bench.plan.latency [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.latency import AIM_P99_RATIO, COMMAND_TEXT, percentile  # noqa: E402
from bench.plan import (  # noqa: E402
    FULL_SUBS,
    MANY_AUDIENCES,
    NEW_REPORTS,
    QUICK_MANY,
    subscribe,
)
from bench.render import make_reports  # noqa: E402
from bot.chat.answers import Answerer  # noqa: E402
from bot.chat.commands import parse  # noqa: E402
from bot.chat.messages import Chat, SectionAnswer  # noqa: E402
from bot.core.clock import utc_clock  # noqa: E402
from bot.core.models import Format, Locale, Platform  # noqa: E402
from bot.core.render.renderer import Renderer  # noqa: E402
from bot.core.reports.parse.parser import parse_file  # noqa: E402
from bot.core.store.reports import ReportStore  # noqa: E402
from bot.core.store.sql.db import create_engine, migrate  # noqa: E402
from bot.core.store.subscriptions.destination_store import DestinationStore  # noqa: E402
from bot.scheduling.planner import Planner, child_setup, digest_ticker  # noqa: E402
from bot.settings import BotConfig  # noqa: E402
from bot.settings.planner import PlannerMode  # noqa: E402
from tests.kits.paths import SEED  # noqa: E402

CLIENTS = 5
PAUSE_SECONDS = 0.05  # between a client's answer and its next command
IDLE_SECONDS = 5.0


async def _never_admin() -> bool:
    return False


CHAT = Chat(Platform.TELEGRAM, "-1007422", "42", _never_admin, Locale.EN, user_name="ada")


class Asker:
    """The clients: each asks `/pr 7422`, waits for the answer rendered, pauses, asks again."""

    def __init__(self, answerer: Answerer, renderer: Renderer) -> None:
        self.answerer = answerer
        self.renderer = renderer
        self.errors = 0

    async def answer_once(self) -> float:
        """One `/pr 7422`, parsed, answered and rendered: its seconds."""
        started = time.perf_counter()
        answer = await self.answerer.answer(parse("pr", COMMAND_TEXT), CHAT)
        reply = answer.reply
        if not isinstance(reply, SectionAnswer):
            self.errors += 1
        else:
            self.renderer.section(reply.item, reply.section, Format.TELEGRAM, CHAT.locale)
        return time.perf_counter() - started

    async def client(self, stop: asyncio.Event, sink: list[float]) -> None:
        while not stop.is_set():
            sink.append(await self.answer_once())
            await asyncio.sleep(PAUSE_SECONDS)

    async def during(self, work: Any) -> tuple[list[float], float]:
        """The latencies while `work` (an awaitable, or seconds to wait) runs, and its
        seconds."""
        stop, sink = asyncio.Event(), list[float]()
        clients = [asyncio.ensure_future(self.client(stop, sink)) for _ in range(CLIENTS)]
        started = time.perf_counter()
        try:
            await (asyncio.sleep(work) if isinstance(work, float) else work)
        finally:
            seconds = time.perf_counter() - started
            stop.set()
            await asyncio.gather(*clients)
        return sink, seconds


def figures(latencies: list[float], seconds: float) -> dict[str, Any]:
    ordered = sorted(latencies)
    return {
        "requests": len(ordered),
        "seconds": round(seconds, 2),
        "p50_ms": round(percentile(ordered, 0.50), 2),
        "p99_ms": round(percentile(ordered, 0.99), 2),
        "max_ms": round(1000 * ordered[-1], 2),
        "mean_ms": round(1000 * statistics.fmean(ordered), 2),
    }


async def measure(url: str, count: int, distinct: int, mode: PlannerMode) -> dict[str, Any]:
    """Fill the store, then time the answers idle and during one tick planned where `mode`
    says (the service's `delivery.planner`): on the loop, or in the planning process."""
    rng = random.Random(7422)
    engine = create_engine(url)
    await migrate(engine)
    await subscribe(engine, count, rng, distinct)
    reports = ReportStore(engine)
    await reports.upsert(parse_file(SEED).report)  # the PR the clients ask for
    await reports.upsert_many([(item.report, "bench") for item in make_reports(NEW_REPORTS, rng)])
    renderer = Renderer()
    answerer = Answerer(reports, DestinationStore(engine), BotConfig(), clock=utc_clock)
    asker = Asker(answerer, renderer)
    # The real clock: the planning process reads it (the subscriptions' latest 09:00 is due).
    ticker = digest_ticker(engine, BotConfig(), renderer)
    planner = Planner(ticker, mode, child_setup(engine, BotConfig(), utc_clock))
    await planner.start()  # as `prdigest run` starts it, before the first tick
    for _ in range(20):  # warm: templates loaded, statements cached
        await asker.answer_once()
    gc.collect()
    gc.freeze()  # as `prdigest run` does once started
    idle = figures(*await asker.during(IDLE_SECONDS))
    ticking = figures(*await asker.during(planner.tick()))
    planned = planner.destinations
    await planner.close()
    await engine.dispose()
    return {
        "idle": idle,
        "tick": ticking,
        "destinations": planned,
        "errors": asker.errors,
        "ratio": round(ticking["p99_ms"] / idle["p99_ms"], 2),
    }


def run(quick: bool = False) -> dict[str, Any]:
    """The same measure with the tick on the loop, then in the planning process (`auto`'s
    choice at this size); each on a fresh store."""
    count, distinct = QUICK_MANY if quick else (FULL_SUBS, MANY_AUDIENCES)
    found: dict[str, Any] = {}
    for mode in (PlannerMode.LOOP, PlannerMode.PROCESS):
        with tempfile.TemporaryDirectory(prefix="prdigest-plan-latency-") as folder:
            url = f"sqlite:///{Path(folder) / 'plan.db'}"
            found[mode.value] = asyncio.run(measure(url, count, distinct, mode))
    return {
        "subscriptions": count,
        "audiences": distinct,
        "clients": CLIENTS,
        **found,
        "pr_p99_ratio": found["process"]["ratio"],
        "pr_p99_ratio_loop": found["loop"]["ratio"],
        "aim": AIM_P99_RATIO,
    }


def summary(figures: dict[str, Any]) -> list[tuple[str, str, str, bool | None]]:
    """The headline row, the p99 ratio while the planning process plans a tick, and the
    same with the tick on the loop beside it (figures from before the planning process
    have only the latter, as `pr_p99_ratio`)."""
    ratio, aim = figures["pr_p99_ratio"], figures["aim"]
    what = (
        f"`/pr` p99 while a tick plans {figures['subscriptions']:,} subscriptions "
        f"({figures['audiences']:,} audiences) / idle"
    )
    if "pr_p99_ratio_loop" not in figures:
        return [(what, f"{ratio:.2f}×", f"≤ {aim}×", ratio <= aim)]
    loop = figures["pr_p99_ratio_loop"]
    return [
        (f"{what}, planning process", f"{ratio:.2f}×", f"≤ {aim}×", ratio <= aim),
        (f"{what}, planned on the loop", f"{loop:.2f}×", "(reference)", None),
    ]


def section(figures: dict[str, Any]) -> list[str]:
    """The docs/benchmarks.md section."""
    phases = [
        (f"{label}: {name}", measured[key])
        for label, measured in (
            ("planned on the loop", figures["loop"]),
            ("planning process", figures["process"]),
        )
        for name, key in (("idle", "idle"), ("during the tick", "tick"))
    ]
    rows = [
        f"| {name} | {f['requests']:,} | {f['seconds']:.1f} | {f['p50_ms']:.2f} "
        f"| {f['p99_ms']:.2f} | {f['max_ms']:.1f} |"
        for name, f in phases
    ]
    return [
        f"## Command latency during a tick: `/pr 7422` while {figures['subscriptions']:,} "
        f"subscriptions ({figures['audiences']:,} audiences) are planned",
        "",
        "| phase | answers | seconds | p50 ms | p99 ms | max ms |",
        "|---|---:|---:|---:|---:|---:|",
        *rows,
        "",
        f"**p99 {figures['pr_p99_ratio']:.2f}× idle while the planning process plans the "
        f"tick** (aim ≤ {figures['aim']}×; {figures['pr_p99_ratio_loop']:.2f}× when the loop "
        "plans it). "
        "One service process, one event loop and one SQLite store, as `prdigest run` has them "
        "(and its planning process, where it plans): "
        f"{figures['clients']} clients each ask `/pr 7422` (answered and rendered for "
        f"Telegram), pause {PAUSE_SECONDS * 1000:.0f} ms and ask again, first for "
        f"{IDLE_SECONDS:g} s with nothing else running, then for as long as the scheduler's "
        "tick plans every digest of the planning benchmark's store: once on the loop "
        "(`delivery.planner: loop`), once in the planning process (what `auto` chooses from "
        "1,000 destinations; `bot/scheduling/planner.py`), each on a fresh store.",
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.plan.latency", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10,000 subscriptions")
    args = parser.parse_args()
    print(json.dumps(run(args.quick), indent=2))


if __name__ == "__main__":
    main()
