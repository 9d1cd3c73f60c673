"""Ingest benchmark: 10,000 generated reports into a fresh SQLite store.

Floors measured in the same run on the same files:
- `read`: reading every file (the I/O floor);
- `markdown-it`: tokenizing every file with markdown-it-py, a full Markdown parse — the honest
  floor for a parser that reads the same structure (ours is a single line scan).
Each phase runs in its own child process so its peak RSS is its own.

    python -m bench.ingest [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "tests" / "data" / "003_ccacf97c43044eb5.txt"
REPOS = ["verl-project/verl", "vllm-project/vllm", "sgl-project/sglang"]
MODULES = ["rollout", "trainer", "sglang", "vllm", "fsdp", "megatron", "ci", "doc", "perf"]


def generate(folder: Path, count: int, seed: int = 7) -> None:
    """`count` reports shaped like the seed, with varied numbers, repos, titles and sizes."""
    rng = random.Random(seed)
    text = SEED.read_text(encoding="utf-8")
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(1, count + 1):
        repo = rng.choice(REPOS)
        mods = ", ".join(rng.sample(MODULES, rng.randint(1, 3)))
        kind = rng.choice(["feat", "fix", "refactor", "chore", "test"])
        body = (
            text.replace("verl-project/verl", repo)
            .replace("PR #7422", f"PR #{n}")
            .replace("/pull/7422", f"/pull/{n}")
            .replace("[rollout] fix: preserve", f"[{mods}] {kind}: preserve #{n}")
            .replace("影响程度：中", f"影响程度：{rng.choice('高中低')}")
        )
        if rng.random() < 0.2:  # some long reports
            body += "\n" + "\n".join(f"- 额外说明 {i}：{'x' * 80}" for i in range(200))
        (folder / f"r{n:05d}.md").write_text(body, encoding="utf-8")


def _phase_read(folder: Path) -> None:
    for path in sorted(folder.glob("*.md")):
        path.read_bytes().decode("utf-8")


def _phase_markdown_it(folder: Path) -> None:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    for path in sorted(folder.glob("*.md")):
        md.parse(path.read_text(encoding="utf-8"))


def _phase_ingest(folder: Path) -> None:
    from bot.core.store.ingest import ingest_paths
    from bot.core.store.reports import ReportStore
    from bot.core.store.sql.db import create_engine, migrate

    async def go() -> None:
        engine = create_engine(f"sqlite:///{folder.parent / 'bench.db'}")
        await migrate(engine)
        summary = await ingest_paths(ReportStore(engine), [folder])
        await engine.dispose()
        assert not summary.failures, summary.failures[:3]

    asyncio.run(go())


PHASES = {"read": _phase_read, "markdown-it": _phase_markdown_it, "ingest": _phase_ingest}


def _child(phase: str, folder: Path) -> dict[str, float]:
    """Run one phase in a child process: wall seconds and peak RSS (MB)."""
    code = (
        "import sys, time, resource; from bench.ingest import PHASES; from pathlib import Path;"
        "t = time.perf_counter(); PHASES[sys.argv[1]](Path(sys.argv[2]));"
        "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, phase, str(folder)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return {"seconds": float(out[0]), "peak_rss_mb": int(out[1]) / 1024}


def run(quick: bool = False) -> dict[str, Any]:
    count = 1_000 if quick else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "reports"
        generate(folder, count)
        results = {phase: _child(phase, folder) for phase in PHASES}
    for figures in results.values():
        figures["reports_per_s"] = count / figures["seconds"]
    ratio = results["ingest"]["reports_per_s"] / results["markdown-it"]["reports_per_s"]
    return {"reports": count, "phases": results, "ratio": ratio, "aim": 0.5}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    started = time.perf_counter()
    figures = run(parser.parse_args().quick)
    print(json.dumps(figures, indent=2))
    print(f"took {time.perf_counter() - started:.1f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
