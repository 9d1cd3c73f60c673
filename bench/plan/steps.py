"""Where a planning tick's time goes: each planning step's seconds, summed over the tick's
batches, and the statements that took longest.

    python -m bench.plan.steps [--subs N] [--audiences N] [--backend sqlite|postgresql]

It fills a store as `bench.plan` does (100,000 subscriptions, 10,000 audiences by default),
then runs one tick with the steps of `bot/core/delivery/outbox.py` timed: wall seconds, so a
step's time includes its waits on the database. `assign` holds `render` (building each fresh
edition's messages) and `write editions` (their rows); the other steps follow each other. The
statements are timed by SQLAlchemy's cursor events, from the moment the statement is handed
to the driver until its rows are ready; the subscriptions' pages are read while batches plan,
so their statements overlap the steps. Beside them, the CPU seconds the tick cost by thread
(the event loop's, the database connections', the PostgreSQL server's): their sum over the
wall time says how many of the machine's CPUs the tick kept busy. Nothing is written to
docs/benchmarks.md: this is for finding what to make faster, not a figure.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from sqlalchemy import event

from bench import plan
from bench.cpu import server_cpu, spent, thread_cpu
from bot.core.delivery import editions, outbox

# (label, module or class, attribute): the steps of a batch, in the order they run
STEPS: tuple[tuple[str, Any, str], ...] = (
    ("take parts", outbox, "take_parts"),
    ("read facts", outbox, "read_facts"),
    ("move watermarks", outbox, "advance_watermarks"),
    ("pick", outbox, "pick"),
    ("build digests", outbox, "build"),
    ("assign editions", editions.EditionBook, "assign"),
    ("  render", editions.EditionBook, "_render"),
    ("  write editions", editions, "fill_editions"),
    ("write runs", outbox, "write_runs"),
)
SHOWN_STATEMENTS = 12
STATEMENT_CHARS = 70


class Timings:
    """Seconds and calls by label."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()

    def longest(self, count: int) -> list[tuple[str, float]]:
        return sorted(self.seconds.items(), key=lambda item: -item[1])[:count]

    def add(self, label: str, seconds: float) -> None:
        self.seconds[label] += seconds
        self.calls[label] += 1


def _timed(label: str, original: Callable[..., Any], timings: Timings) -> Callable[..., Any]:
    if asyncio.iscoroutinefunction(original):

        @functools.wraps(original)
        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                timings.add(label, time.perf_counter() - started)

        return timed_async

    @functools.wraps(original)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            timings.add(label, time.perf_counter() - started)

    return timed


@contextmanager
def steps_timed(timings: Timings) -> Iterator[None]:
    """STEPS wrapped in timers while inside; put back after (a step renamed in the code is an
    AttributeError here, not a step silently left out)."""
    with ExitStack() as undo:
        for label, owner, name in STEPS:
            original = getattr(owner, name)
            setattr(owner, name, _timed(label, original, timings))
            undo.callback(setattr, owner, name, original)
        yield


@contextmanager
def statements_timed(engine: Any, timings: Timings) -> Iterator[None]:
    """Each statement's seconds, by its first STATEMENT_CHARS characters."""
    sync = engine.sync_engine

    def before(conn: Any, _cursor: Any, _statement: str, *_: Any) -> None:
        conn.info.setdefault("bench_started", []).append(time.perf_counter())

    def after(conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        started = conn.info["bench_started"].pop()
        timings.add(" ".join(statement.split())[:STATEMENT_CHARS], time.perf_counter() - started)

    event.listen(sync, "before_cursor_execute", before)
    event.listen(sync, "after_cursor_execute", after)
    try:
        yield
    finally:
        event.remove(sync, "before_cursor_execute", before)
        event.remove(sync, "after_cursor_execute", after)


async def profile(url: str, count: int, distinct: int) -> dict[str, Any]:
    """Fill the store as `bench.plan` does, run one tick with its steps and statements timed."""
    engine, ticker = await plan.filled(url, count, distinct)
    steps, statements = Timings(), Timings()
    with steps_timed(steps), statements_timed(engine, statements):
        threads, server = thread_cpu(), server_cpu(engine)
        started = time.perf_counter()
        runs = await ticker.tick()
        seconds = time.perf_counter() - started
        after = thread_cpu()
        server_s = spent(server, server_cpu(engine))
    await engine.dispose()
    cpu = {name: at - threads.get(name, 0.0) for name, at in after.items()}  # new ones: from 0
    return {
        "seconds": seconds,
        "runs": len(runs),
        "steps": steps,
        "statements": statements,
        "threads": cpu,
        "server_cpu_s": server_s,
    }


def cpu_lines(found: dict[str, Any]) -> list[str]:
    """CPU seconds during the tick: the event loop's thread (Python, holding the GIL), the
    others (SQLite's C code runs on its connections' threads), the PostgreSQL server; and how
    many CPUs were busy on average. What the threads do at the same time is what 2 CPUs buy."""
    seconds, threads = found["seconds"], found["threads"]
    main = threading.main_thread().name
    loop = threads.get(main, 0.0)
    others = [used for name, used in threads.items() if name != main]
    server = found["server_cpu_s"]
    total = loop + sum(others) + (server or 0.0)
    return [
        f"CPU seconds during the tick ({seconds:.2f} s of wall time)",
        f"{'event loop thread':<18} {loop:7.2f}",
        f"{'other threads':<18} {sum(others):7.2f} ({len(others)} threads)",
        f"{'PostgreSQL server':<18} {'—' if server is None else f'{server:7.2f}':>7}",
        f"{'in all':<18} {total:7.2f} ({total / seconds:.2f} CPUs busy on average)",
    ]


def report(found: dict[str, Any]) -> list[str]:
    """The steps in order and the slowest statements, with their share of the tick."""
    seconds = found["seconds"]
    steps, statements = found["steps"], found["statements"]
    lines = [f"one tick: {found['runs']:,} runs in {seconds:.2f} s", "", "step: seconds (calls)"]
    for label, _, _ in STEPS:
        spent = steps.seconds[label]
        lines.append(f"{label:<18} {spent:7.2f} {spent / seconds:6.1%} ({steps.calls[label]:,})")
    total = sum(steps.seconds[label] for label, _, _ in STEPS if not label.startswith(" "))
    lines.append(f"{'(the steps)':<18} {total:7.2f} {total / seconds:6.1%}")
    lines += ["", *cpu_lines(found), "", "statement: seconds (calls)"]
    for text, spent in statements.longest(SHOWN_STATEMENTS):
        lines.append(f"{spent:7.2f} ({statements.calls[text]:,})  {text}")
    return lines


async def _main(backend: str, count: int, distinct: int) -> list[str]:
    async with plan.store_url(backend, "plan_steps") as url:
        if url is None:
            return ["no PostgreSQL answered"]
        return report(await profile(url, count, distinct))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.plan.steps", description=__doc__)
    parser.add_argument("--subs", type=int, default=plan.FULL_SUBS)
    parser.add_argument("--audiences", type=int, default=plan.MANY_AUDIENCES)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    args = parser.parse_args()
    lines = asyncio.run(_main(args.backend, args.subs, args.audiences))
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
