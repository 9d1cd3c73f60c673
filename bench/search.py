"""Search: 10 representative queries over 100,000 reports, indexed, beside a full scan.

The store is generated with varied text, so words have a spread of frequencies as in a real
store (the memory benchmark's store repeats one report 100,000 times: every word is in every
report). Each report takes its title from the real verl PR titles (tests/data) and each text
field a few clauses cut from the example reports, drawn with Zipf weights: a frequent clause
is in a third of the reports, a rare one in a handful. Key files, risk flags, levels, repos
and merge times (the last two years) are drawn the same way.

Each query runs WARMUP + RUNS times through `finder.search.search` (limit 10, as the chats
ask); p50 and p99 are over every timed run of every query. As `timeit` does, Python's cycle
collector runs before a query's timed runs and not during them: a full collection walks every
object of the process (about 100,000 here) and took up to 50 ms on this machine, whatever the
search was doing. The floor is the same query
answered by a full scan in Python over the stored rows (read, validate, `matches`), once per
query; it must find the same number of reports. PostgreSQL (a private schema on
$BOT_BENCH_DATABASE_URL, default the local test server) runs the same queries on the same
reports, or is skipped with the reason; it is also timed at 1,000, 10,000 and 100,000 reports
(PG_SIZES), each a fresh store timed just after its bulk ingest, never analyzed by hand.

    python -m bench.search [--quick]     # --quick: 10,000 reports (and no 100,000 on PostgreSQL)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import re
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


from bench.ingest import REPOS  # noqa: E402
from bench.pg import PG_DEFAULT, PG_ENV, postgres_schema  # noqa: E402
from bot.core.query import matches, parse  # noqa: E402
from bot.core.reports.model import KeyFile, Report  # noqa: E402
from bot.core.reports.parse.parser import parse_file  # noqa: E402
from bot.core.reports.tags import derive_tags  # noqa: E402
from bot.core.store.finder.search import WINDOW, search  # noqa: E402
from bot.core.store.reports import ReportStore  # noqa: E402
from bot.core.store.sql.db import create_engine, migrate  # noqa: E402

FULL_REPORTS = 100_000
QUICK_REPORTS = 10_000
BATCH = 2_000
WARMUP = 2
RUNS = 20
LIMIT = 10
AIM_P99_MS = 50.0
AIM_RATIO = 20.0
# PostgreSQL is timed at each of these store sizes too (`p99_ms_pg_1k` …): a quick run
# (10,000 reports) skips 100,000.
PG_SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000}
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
QUERIES = (
    "权重",  # a two-character Chinese word
    "rollout",  # an English word
    '"weight sync"',  # a phrase
    "file:*rollout*",  # a file glob with wildcards (checked by the evaluator)
    "file:verl/workers/**",  # a directory glob
    "risk:fp8",  # a risk flag
    "tag:rollout -tag:ci impact>=medium",  # a combined boolean query
    "since:30d",  # a time range
    "(sglang OR vllm) rec>=read",  # OR and a level
    "#7422",  # a PR number
)
_CLAUSE_SPLIT = re.compile(r"[。；;\n]|(?<=[.!?])\s")
FIELDS = ("summary", "recommendation", "motivation", "implementation", "risks", "impact")
DIRS = ("verl/workers/rollout", "verl/trainer", "verl/utils", "verl/models", "tests", "docs")
RISKS = ("FP8", "显存", "API 变更", "权重同步", "并发", "CI", "性能回退", "兼容性")


class Corpus:
    """Clauses, titles and paths to draw reports from, with Zipf weights."""

    def __init__(self, rng: random.Random) -> None:
        examples = [parse_file(p).report for p in sorted((ROOT / "examples").rglob("*.md"))]
        clauses = {
            clause.strip()
            for report in examples
            for name in (*FIELDS, "comment_highlights")
            for clause in _CLAUSE_SPLIT.split(str(getattr(report, name)))
            if len(clause.strip()) > 6
        }
        self.clauses = sorted(clauses)
        rng.shuffle(self.clauses)
        titles = (ROOT / "tests" / "data" / "verl-pr-titles.txt").read_text(encoding="utf-8")
        self.titles = [line.strip() for line in titles.splitlines() if line.strip()]
        self.files = sorted({kf.path for r in examples for kf in r.key_files})
        self.weights = [1 / (rank + 1) for rank in range(len(self.clauses))]

    def text(self, rng: random.Random, count: int) -> str:
        return "。".join(rng.choices(self.clauses, self.weights, k=count))

    def report(self, rng: random.Random, number: int) -> Report:
        paths = rng.sample(self.files, min(2, len(self.files)))
        paths += [f"{rng.choice(DIRS)}/m{rng.randrange(500)}.py" for _ in range(rng.randint(0, 3))]
        title = rng.choice(self.titles)
        return Report(
            repo=rng.choice(REPOS),
            number=number,
            title=title,
            tags=derive_tags(title),
            merged_at=NOW - timedelta(minutes=rng.randrange(2 * 365 * 24 * 60)),
            key_files=[KeyFile(path=path) for path in paths],
            risk_flags=rng.sample(RISKS, rng.randint(0, 2)),
            impact_level=rng.choice(["low", "medium", "high", None]),
            recommendation_level=rng.choice(["skip", "skim", "read", "must_read"]),
            **{name: self.text(rng, rng.randint(1, 4)) for name in FIELDS},
        )


async def fill(url: str, count: int) -> float:
    """Write the corpus's `count` reports into a fresh store; seconds taken."""
    started = time.perf_counter()
    engine = create_engine(url)
    try:
        await migrate(engine)
        store = ReportStore(engine)
        rng = random.Random(16)
        corpus = Corpus(rng)
        for first in range(1, count + 1, BATCH):
            numbers = range(first, min(count, first + BATCH - 1) + 1)
            await store.upsert_many([(corpus.report(rng, n), "bench") for n in numbers])
    finally:
        await engine.dispose()
    return time.perf_counter() - started


async def timed(url: str) -> dict[str, Any]:
    """Each query's total and its timings (ms) through the search service."""
    engine = create_engine(url)
    store = ReportStore(engine)
    found: dict[str, Any] = {}
    try:
        for raw in QUERIES:
            query = parse(raw)
            runs: list[float] = []
            total, first = 0, 0.0
            for attempt in range(WARMUP + RUNS):
                if attempt == WARMUP:  # as timeit does: no cycle collection while timed
                    gc.collect()
                    gc.disable()
                started = time.perf_counter()
                result = await search(store, query, limit=LIMIT, now=NOW)
                ms = (time.perf_counter() - started) * 1000
                if attempt >= WARMUP:
                    runs.append(ms)
                elif attempt == 0:
                    first = ms
                total = result.total
            gc.enable()
            found[raw] = {
                "total": total,
                "capped": result.capped,
                "runs_ms": runs,
                "first_ms": first,
            }
    finally:
        gc.enable()
        await engine.dispose()
    return found


async def scanned(url: str) -> dict[str, Any]:
    """Each query answered by reading and checking every stored report: (total, ms)."""
    engine = create_engine(url)
    store = ReportStore(engine)
    found: dict[str, Any] = {}
    try:
        for raw in QUERIES:
            query = parse(raw)
            started = time.perf_counter()
            total = 0
            async for report, seen_at in store.each():
                total += matches(query, report, seen_at=seen_at, now=NOW)
            found[raw] = {"total": total, "ms": (time.perf_counter() - started) * 1000}
    finally:
        await engine.dispose()
    return found


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _summary(found: dict[str, Any]) -> dict[str, float]:
    every = [ms for item in found.values() for ms in item["runs_ms"]]
    return {"p50_ms": statistics.median(every), "p99_ms": _percentile(every, 0.99)}


async def measure(folder: Path, count: int) -> dict[str, Any]:
    url = f"sqlite:///{folder / 'search.db'}"
    build_s = await fill(url, count)
    indexed = await timed(url)
    floor = await scanned(url)
    for raw in QUERIES:  # the index answers as the scan does, or the figures mean nothing
        scan_total, item = floor[raw]["total"], indexed[raw]
        if (item["total"], item["capped"]) != (min(scan_total, WINDOW), scan_total > WINDOW):
            raise AssertionError(f"{raw!r}: search counted {item['total']}, the scan {scan_total}")
    figures: dict[str, Any] = {"reports": count, "build_s": round(build_s, 1)}
    figures.update(_summary(indexed))
    search_ms = sum(statistics.median(item["runs_ms"]) for item in indexed.values())
    figures["ratio_vs_scan"] = sum(item["ms"] for item in floor.values()) / search_ms
    figures["queries"] = {
        raw: {
            "total": floor[raw]["total"],
            "p50_ms": statistics.median(indexed[raw]["runs_ms"]),
            "p99_ms": _percentile(indexed[raw]["runs_ms"], 0.99),
            "first_ms": indexed[raw]["first_ms"],
            "scan_ms": floor[raw]["ms"],
        }
        for raw in QUERIES
    }
    async with postgres_schema("search") as pg_url:
        if pg_url is None:
            figures["p99_ms_pg"] = None
            figures["pg_skipped"] = f"no PostgreSQL answered at ${PG_ENV} (default {PG_DEFAULT})"
        else:
            figures["pg_build_s"] = round(await fill(pg_url, count), 1)
            on_pg = await timed(pg_url)
            figures["p50_ms_pg"] = _summary(on_pg)["p50_ms"]
            figures["p99_ms_pg"] = _summary(on_pg)["p99_ms"]
            for raw, item in on_pg.items():
                figures["queries"][raw]["pg_p50_ms"] = statistics.median(item["runs_ms"])
    figures.update(await pg_sizes(count, figures["p99_ms_pg"]))
    return figures


async def pg_sizes(count: int, measured: float | None) -> dict[str, float | None]:
    """PostgreSQL's p99 at each of PG_SIZES: a fresh store for each, timed just after its bulk
    ingest, never analyzed by hand (autovacuum may or may not have run by then). The main
    store's figure stands for its own size; a quick run skips the sizes above it (None)."""
    figures: dict[str, float | None] = {}
    for label, size in PG_SIZES.items():
        key = f"p99_ms_pg_{label}"
        if size >= count:
            figures[key] = measured if size == count else None
            continue
        async with postgres_schema(f"search {label}") as pg_url:
            figures[key] = None if pg_url is None else await _pg_p99(pg_url, size)
    return figures


async def _pg_p99(url: str, count: int) -> float:
    await fill(url, count)
    return _summary(await timed(url))["p99_ms"]


def run(quick: bool = False, work: Path | None = None) -> dict[str, Any]:
    count = QUICK_REPORTS if quick else FULL_REPORTS
    with tempfile.TemporaryDirectory() as tmp:
        folder = (work or Path(tmp)) / "search"
        folder.mkdir(parents=True, exist_ok=True)
        figures = asyncio.run(measure(folder, count))
    return {**figures, "aim_p99_ms": AIM_P99_MS, "aim_ratio": AIM_RATIO}


def _met(figures: dict[str, Any]) -> bool:
    pg = [figures.get("p99_ms_pg"), *(figures.get(f"p99_ms_pg_{label}") for label in PG_SIZES)]
    return bool(
        figures["p99_ms"] <= AIM_P99_MS
        and all(p99 is None or p99 <= AIM_P99_MS for p99 in pg)
        and figures["ratio_vs_scan"] >= AIM_RATIO
    )


def size_rows(figures: dict[str, Any]) -> list[tuple[str, str, str, bool | None]]:
    """The headline rows of PostgreSQL's p99 at each of PG_SIZES: measured, aim, met ("not
    measured" where the run skipped a size)."""
    rows: list[tuple[str, str, str, bool | None]] = []
    for label, size in PG_SIZES.items():
        p99 = figures.get(f"p99_ms_pg_{label}")
        shown = "not measured" if p99 is None else f"{p99:.1f} ms"
        met = None if p99 is None else p99 <= AIM_P99_MS
        rows.append((f"search p99, PostgreSQL, {size:,} reports", shown, "≤ 50 ms", met))
    return rows


def _sizes_line(figures: dict[str, Any]) -> str:
    """PostgreSQL's p99 at each size, beside the aim ('' when none was measured)."""
    shown = []
    for label, size in PG_SIZES.items():
        p99 = figures.get(f"p99_ms_pg_{label}")
        if p99 is None:
            shown.append(f"{size:,} reports not measured")
        else:
            verdict = "met" if p99 <= AIM_P99_MS else "**not met**"
            shown.append(f"{size:,} reports {p99:.1f} ms ({verdict})")
    if not any(f"p99_ms_pg_{label}" in figures for label in PG_SIZES):
        return ""
    return (
        f" **PostgreSQL p99 by store size** (aim ≤ {AIM_P99_MS:.0f} ms at each; a fresh store "
        "timed just after its bulk ingest, never analyzed by hand): " + "; ".join(shown) + ". "
        "A word's walk joins each facets row to its word list through a LATERAL subquery with a "
        "LIMIT, which PostgreSQL cannot flatten: as a plain join, once autovacuum had analyzed "
        "the store it hashed every report's text instead (a `strpos` over 100,000 texts priced "
        "as one operator, below 1,000 index probes). A word or phrase checked row by row is "
        "looked for in the facets row's own text columns, not in `report_search.body`: the "
        "body cost a probe of its key and the decompression of its text for every row of the "
        "range, 1.5 to 3 times the time of the whole check (`权重` over 1,000 rows: 9.7 ms "
        "against 3.4 ms)."
    )


def section(figures: dict[str, Any]) -> list[str]:
    """The docs/benchmarks.md section."""
    pg_shown = figures.get("p99_ms_pg") is not None
    rows = [
        f"| `{raw}` | {q['total']:,} | {q['p50_ms']:.1f} | {q['p99_ms']:.1f} "
        + f"| {q['first_ms']:.1f} "
        + (f"| {q['pg_p50_ms']:.1f} " if pg_shown else "| — ")
        + f"| {q['scan_ms']:,.0f} | {q['scan_ms'] / q['p50_ms']:,.0f}× |"
        for raw, q in figures["queries"].items()
    ]
    pg = (
        f"PostgreSQL p99 {figures['p99_ms_pg']:.1f} ms"
        if pg_shown
        else f"PostgreSQL skipped: {figures.get('pg_skipped')}"
    )
    return [
        f"## Search: 10 queries over {figures['reports']:,} reports",
        "",
        "| query | matches | p50 ms | p99 ms | first ask ms | PostgreSQL p50 ms "
        "| full scan ms | ÷ scan |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        f"**SQLite p50 {figures['p50_ms']:.1f} ms, p99 {figures['p99_ms']:.1f} ms; {pg}** "
        f"(aim p99 ≤ {AIM_P99_MS:.0f} ms on both); **{figures['ratio_vs_scan']:,.0f}× faster "
        f"than the full scan** (aim ≥ {AIM_RATIO:.0f}×; the scans' total time over the "
        "searches' total median time). Aims met: "
        + ("yes." if _met(figures) else "**no**.")
        + f" Each query runs {RUNS} times after {WARMUP} warm-up runs, limit {LIMIT}, through "
        "`finder.search.search`, with Python's cycle collector paused while timed (as "
        "`timeit` does). First ask: the query's first run on SQLite, a warm-up run, which "
        "builds the query's statements (a later search of the same query reuses them, unless "
        "it has a time term: `bot/core/store/finder/built.py`) and reads from a colder page "
        "cache; the p50 and p99 are of the runs after it. The scan reads every row, validates "
        "it and runs `matches`, "
        "and must find the same number of reports (search counts up to "
        f"{WINDOW:,}, then says {WINDOW:,}+). The store is generated with varied text "
        f"(filled in {figures['build_s']:.0f} s on SQLite): titles from the real verl PR "
        "titles, each text field a few clauses cut from the example reports drawn with Zipf "
        "weights, key files, risk flags, levels and merge times over two years."
        + _sizes_line(figures),
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 reports instead of 100,000")
    print(json.dumps(run(parser.parse_args().quick), indent=2))


if __name__ == "__main__":
    main()
