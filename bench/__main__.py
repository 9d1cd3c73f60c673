"""`make bench` (= `python -m bench [--quick]`): run every benchmark, rewrite docs/benchmarks.md.

Each figure stands beside its floor or peer measured in the same run. The raw figures also go to
$BENCH_JSON (default bench/results.json, not committed). `--quick` takes about five minutes
instead of about an hour (smaller inputs: a smoke run, not the figures); `--only NAME` runs one
benchmark.
Only a full run of every benchmark rewrites docs/benchmarks.md: a quick or partial run writes
$BENCH_JSON and prints its headline table, and leaves the page's figures as they are.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import ingest, latency, memory, plan, recovery, render, search
from bench.fanout import lark as fanout_lark
from bench.fanout import pg as fanout_pg
from bench.fanout import telegram as fanout
from bench.plan import latency as plan_latency

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"

Benchmark = Callable[[bool, Path], dict[str, Any]]
BENCHMARKS: dict[str, Benchmark] = {
    "ingest": lambda quick, work: ingest.run(quick),
    "render": lambda quick, work: render.run(quick),
    "memory": memory.run,  # builds the 100,000-report store the latency benchmark reuses
    "command_latency": latency.run,
    "fanout": lambda quick, work: fanout.run(quick),
    "search": search.run,
    "recovery": lambda quick, work: recovery.run(quick),
    "fanout_pg": lambda quick, work: fanout_pg.run(quick),
    "plan": lambda quick, work: plan.run(quick),
    "plan_latency": lambda quick, work: plan_latency.run(quick),
}


def machine() -> dict[str, str]:
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpus": str(os.cpu_count()),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "sqlite": sqlite3.sqlite_version,
        "postgresql": "the local server, for the search, recovery and replica fan-out",
    }


def _ingest_section(figures: dict[str, Any]) -> list[str]:
    phases = figures["phases"]
    rows = [
        f"| {name} | {p['reports_per_s']:,.0f} | {p['seconds']:.2f} | {p['peak_rss_mb']:.0f} |"
        for name, p in phases.items()
    ]
    return [
        f"## Ingest: {figures['reports']:,} generated reports into a fresh SQLite store",
        "",
        "| phase | reports/s | seconds | peak RSS (MB) |",
        "|---|---:|---:|---:|",
        *rows,
        "",
        f"**Ingest ÷ markdown-it floor: {figures['ratio']:.2f}** (aim ≥ {figures['aim']}). "
        "`read` only reads the files; `markdown-it` tokenizes them (a full Markdown parse); "
        "`ingest` parses our report format, derives tags and writes to SQLite in batches.",
        "",
    ]


def _render_section(figures: dict[str, Any]) -> list[str]:
    rows = [
        f"| {name} | {p['channels']:,} | {p['messages']:,} | {p['render_seconds']:.2f} "
        f"| {p['send_seconds']:.1f} |"
        for name in ("telegram", "slack")
        if (p := figures.get(name))
    ]
    return [
        f"## Render: digests for {figures['channels']:,} channels over "
        f"{figures['reports']:,} new reports",
        "",
        "| platform | channels | messages | render s | rate-limited send s |",
        "|---|---:|---:|---:|---:|",
        *rows,
        "",
        f"**Rendering is {figures['share']:.1%} of the time the rate limits need to send the "
        f"result** (aim ≤ {figures['aim']:.0%}; Telegram 30 messages/s overall, Slack 1/s per "
        "channel, channels in parallel).",
        "",
    ]


def _verdict(ok: bool | None) -> str:
    return "—" if ok is None else ("yes" if ok else "**no**")


def summary_rows(results: dict[str, Any]) -> list[str]:
    """One line per headline figure: measured, beside what, aim, met."""
    rows: list[tuple[str, str, str, bool | None]] = []
    if (f := results.get("command_latency")) and "error" not in f:
        rows.append(("`/pr` ack p50 ÷ bare bolt", f"{f['p50_ratio']:.2f}×", "—", None))
        rows.append(
            ("`/pr` ack p99 ÷ bare bolt", f"{f['p99_ratio']:.2f}×", "≤ 1.2×", f["p99_ratio"] <= 1.2)
        )
    if (f := results.get("fanout")) and "error" not in f:
        ptb = f.get("ptb_rate_ratio")
        clean = f["lost"] == 0 and f["duplicates"] == 0
        ptb_shown = "skipped" if ptb is None else f"{ptb:.3f}"
        rows += [
            ("fan-out rate ÷ allowed", f"{f['rate_ratio']:.3f}", "≥ 0.95", f["rate_ratio"] >= 0.95),
            ("fan-out 429s provoked", str(f["violations"]), "0", f["violations"] == 0),
            ("fan-out lost / duplicated", f"{f['lost']} / {f['duplicates']}", "0 / 0", clean),
            ("PTB `AIORateLimiter` rate ÷ allowed", ptb_shown, "(peer)", None),
        ]
        if lark := f.get("lark"):
            rows += fanout_lark.summary(lark)
    if (f := results.get("ingest")) and "error" not in f:
        rows.append(("ingest ÷ markdown-it", f"{f['ratio']:.2f}", "≥ 0.5", f["ratio"] >= 0.5))
    if (f := results.get("render")) and "error" not in f:
        rows.append(("render ÷ send time", f"{f['share']:.1%}", "≤ 5%", f["share"] <= 0.05))
    if (f := results.get("memory")) and "error" not in f:
        name = f"peak RSS, {f['reports']:,} reports"
        aim = memory.AIM_RSS_MB
        rows.append((name, f"{f['rss_mb']:,.0f} MB", f"≤ {aim} MB", f["rss_mb"] <= aim))
    if (f := results.get("search")) and "error" not in f:
        pg = f.get("p99_ms_pg")
        rows += [
            ("search p99, SQLite", f"{f['p99_ms']:.1f} ms", "≤ 50 ms", f["p99_ms"] <= 50),
            (
                "search p99, PostgreSQL",
                "skipped" if pg is None else f"{pg:.1f} ms",
                "≤ 50 ms",
                None if pg is None else pg <= 50,
            ),
            *search.size_rows(f),
            (
                "search ÷ full scan",
                f"{f['ratio_vs_scan']:,.0f}×",
                "≥ 20×",
                f["ratio_vs_scan"] >= 20,
            ),
        ]
    if (f := results.get("fanout_pg")) and "error" not in f and "skipped" not in f:
        clean = (f["violations"], f["lost"], f["duplicates"]) == (0, 0, 0)
        rows += [
            ("fan-out, 3 replicas on PostgreSQL, rate ÷ allowed", f"{f['rate_ratio']:.3f}",
             "≥ 0.90", f["rate_ratio"] >= 0.90),
            ("fan-out, 3 replicas: 429s / lost / duplicated",
             f"{f['violations']} / {f['lost']} / {f['duplicates']}", "0 / 0 / 0", clean),
        ]  # fmt: skip
    if (f := results.get("recovery")) and "error" not in f and "skipped" not in f:
        resume = f["claims_resume_s"]
        rows.append(("claims taken over after a kill", f"{resume:.2f} s", "≤ 5 s", resume <= 5))
    if (f := results.get("plan")) and "error" not in f:
        rows += plan.summary(f)
    if (f := results.get("plan_latency")) and "error" not in f:
        rows += plan_latency.summary(f)
    lines = ["| figure | measured | aim | met |", "|---|---:|---:|:---:|"]
    lines += [f"| {name} | {value} | {aim} | {_verdict(ok)} |" for name, value, aim, ok in rows]
    return [*lines, ""]


SECTIONS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "command_latency": latency.section,
    "fanout": fanout.section,
    "ingest": _ingest_section,
    "render": _render_section,
    "memory": memory.section,
    "search": search.section,
    "recovery": recovery.section,
    "fanout_pg": fanout_pg.section,
    "plan": plan.section,
    "plan_latency": plan_latency.section,
}


def write_doc(results: dict[str, Any], info: dict[str, str], doc: Path = DOC) -> None:
    lines = [
        "# Benchmarks",
        "",
        f"Measured {info['date']} on {info['cpus']} CPUs, Python {info['python']}, "
        f"SQLite {info['sqlite']}, PostgreSQL {info['postgresql']} ({info['platform']}).",
        "",
        "Reproduce: `make bench` (rewrites this file; raw figures in `$BENCH_JSON`, "
        "default `bench/results.json`). Every benchmark runs on this one machine: servers, "
        "clients and the fake Slack/Telegram APIs share its CPUs.",
        "",
        *summary_rows(results),
    ]
    for name, section in SECTIONS.items():
        figures = results.get(name)
        if figures is None:
            continue
        if "error" in figures:
            lines += [f"## {name}: failed", "", "```", figures["error"], "```", ""]
            continue
        lines += section(figures)
    doc.parent.mkdir(exist_ok=True)
    doc.write_text("\n".join(lines), encoding="utf-8")


def publish(results: dict[str, Any], info: dict[str, str], full: bool, doc: Path = DOC) -> bool:
    """A full run's figures become the page; a quick or partial run's headline table is only
    printed (smoke figures must never stand on the page as the measurements)."""
    if full:
        write_doc(results, info, doc)
        return True
    print("\n".join(summary_rows(results)))
    return False


def run_all(names: list[str], quick: bool, work: Path) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name in names:
        started = time.perf_counter()
        print(f"bench {name}…", file=sys.stderr, flush=True)
        try:
            results[name] = BENCHMARKS[name](quick, work)
        except Exception:  # one broken benchmark must not lose the others' figures
            results[name] = {"error": traceback.format_exc(limit=8)}
            print(results[name]["error"], file=sys.stderr)
        print(f"bench {name}: {time.perf_counter() - started:.1f}s", file=sys.stderr, flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="about five minutes in all, smaller inputs"
    )
    parser.add_argument("--only", choices=sorted(BENCHMARKS), action="append")
    args = parser.parse_args()
    names = [name for name in BENCHMARKS if not args.only or name in args.only]
    work = Path(tempfile.mkdtemp(prefix="prdigest-bench-"))
    try:
        results = run_all(names, args.quick, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    info = machine()
    out = Path(os.environ.get("BENCH_JSON", ROOT / "bench" / "results.json"))
    out.write_text(json.dumps({"machine": info, **results}, indent=2), encoding="utf-8")
    if publish(results, info, full=not (args.quick or args.only)):
        print(f"wrote {DOC.relative_to(ROOT)} and {out}", file=sys.stderr)
    else:
        print(f"wrote {out}; {DOC.relative_to(ROOT)} is left as it is: only a full "
              "`make bench` rewrites it", file=sys.stderr)  # fmt: skip
    if any("error" in figures for figures in results.values()):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
