"""`make bench` (= `python -m bench [--quick]`): run every benchmark, rewrite docs/benchmarks.md.

Each figure stands beside its floor measured in the same run. The raw figures also go to
$BENCH_JSON (default bench/results.json, not committed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import ingest, render

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"

BENCHMARKS: dict[str, Callable[[bool], dict[str, Any]]] = {
    "ingest": ingest.run,
    "render": render.run,
}


def machine() -> dict[str, str]:
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpus": str(os.cpu_count()),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "sqlite": sqlite3.sqlite_version,
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


def write_doc(results: dict[str, Any], info: dict[str, str], command: str) -> None:
    lines = [
        "# Benchmarks",
        "",
        f"Measured {info['date']} on {info['cpus']} CPUs, Python {info['python']}, "
        f"SQLite {info['sqlite']} ({info['platform']}).",
        "",
        f"Reproduce: `{command}` (rewrites this file; raw figures in `$BENCH_JSON`, "
        "default `bench/results.json`).",
        "",
    ]
    if "ingest" in results:
        lines += _ingest_section(results["ingest"])
    if "render" in results:
        lines += _render_section(results["render"])
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text("\n".join(lines), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="about a minute in all")
    parser.add_argument("--only", choices=sorted(BENCHMARKS), action="append")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    for name in args.only or BENCHMARKS:
        started = time.perf_counter()
        print(f"bench {name}…", file=sys.stderr, flush=True)
        results[name] = BENCHMARKS[name](args.quick)
        print(f"bench {name}: {time.perf_counter() - started:.1f}s", file=sys.stderr)
    out = Path(os.environ.get("BENCH_JSON", ROOT / "bench" / "results.json"))
    out.write_text(json.dumps({"machine": machine(), **results}, indent=2), encoding="utf-8")
    command = "make bench QUICK=1" if args.quick else "make bench"
    write_doc(results, machine(), command)
    print(f"wrote {DOC.relative_to(ROOT)} and {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
