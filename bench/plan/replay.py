"""The per-audience work of a planning tick, timed alone.

    python -m bench.plan.replay [--subs N] [--audiences N] [--rounds N]

On these 2-CPU machines one whole tick of `bench.plan` varies by ±5% from run to run, so a
change worth 2% cannot be seen in it. Much of what an extra audience costs is Python that
needs no database: building its digest and rendering its edition. This fills a store as
`bench.plan` does (100,000 subscriptions, 10,000 audiences by default), plans one tick while
it keeps each digest's build and each fresh edition's render (`EditionBook.digest`,
`EditionBook._render`), then runs those again `--rounds` times, with the cyclic collector as
a tick has it (`fewer_collections`) and what was allocated before frozen out of its way, and
prints the best round of each. The machine's pace still drifts by 10% over minutes: compare
two commits by running it in each in turn, a few times. Nothing is written to
docs/benchmarks.md: this is for finding what to make faster.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from bench import plan
from bot.core.delivery.collect import fewer_collections
from bot.core.delivery.editions import EditionBook
from bot.core.digest.select import Digest

ROUNDS = 5


class Kept:
    """What a tick built and rendered, ready to run again."""

    def __init__(self) -> None:
        self.builds: list[Callable[[], Digest]] = []
        self.renders: list[tuple[Any, ...]] = []  # `_render`'s arguments, the book first


@contextmanager
def keeping(kept: Kept) -> Iterator[None]:
    """`EditionBook.digest` and `._render` also keep what they are given while inside: a
    digest's build when the book calls it (on its first use), each render's arguments."""
    digest, render = EditionBook.digest, EditionBook._render

    def kept_digest(book: EditionBook, audience: Hashable, build: Callable[[], Digest]) -> Digest:
        def keep() -> Digest:
            kept.builds.append(build)
            return build()

        return digest(book, audience, keep)

    def kept_render(book: EditionBook, *args: Any) -> Any:
        kept.renders.append((book, *args))
        return render(book, *args)

    with ExitStack() as undo:
        for name, wrapper, original in (
            ("digest", kept_digest, digest),
            ("_render", kept_render, render),
        ):
            setattr(EditionBook, name, wrapper)
            undo.callback(setattr, EditionBook, name, original)
        yield


async def record(url: str, count: int, distinct: int) -> Kept:
    """Fill the store at `url` as `bench.plan` does and plan one tick, keeping its work."""
    engine, ticker = await plan.filled(url, count, distinct)
    kept = Kept()
    with keeping(kept):
        await ticker.tick()
    await engine.dispose()
    return kept


def replay(kept: Kept, rounds: int) -> dict[str, float]:
    """The best of `rounds` runs of every kept build, and of every kept render (seconds)."""
    render = EditionBook._render
    work: dict[str, Callable[[], object]] = {
        "build digests": lambda: [build() for build in kept.builds],
        "render editions": lambda: [render(*args) for args in kept.renders],
    }
    best = dict.fromkeys(work, float("inf"))
    gc.collect()
    gc.freeze()  # the store, the reports, what was kept: a tick's collections never walk them
    try:
        with fewer_collections():
            for _ in range(rounds):
                for label, run in work.items():
                    started = time.perf_counter()
                    run()
                    best[label] = min(best[label], time.perf_counter() - started)
    finally:
        gc.unfreeze()
    return best


def report(kept: Kept, best: dict[str, float], rounds: int) -> list[str]:
    counts = {"build digests": len(kept.builds), "render editions": len(kept.renders)}
    lines = [f"best of {rounds} rounds: seconds (calls, ms each)"]
    for label, seconds in best.items():
        each = 1000 * seconds / max(counts[label], 1)
        lines.append(f"{label:<16} {seconds:7.3f} ({counts[label]:,}, {each:.3f})")
    return lines


async def _main(count: int, distinct: int, rounds: int) -> list[str]:
    async with plan.store_url("sqlite", "plan_replay") as url:
        assert url is not None  # (SQLite always answers)
        kept = await record(url, count, distinct)
    return report(kept, replay(kept, rounds), rounds)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.plan.replay", description=__doc__)
    parser.add_argument("--subs", type=int, default=plan.FULL_SUBS)
    parser.add_argument("--audiences", type=int, default=plan.MANY_AUDIENCES)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args()
    lines = asyncio.run(_main(args.subs, args.audiences, args.rounds))
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
