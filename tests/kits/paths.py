"""Where the repository's files are, for tests, fakes and benchmarks alike."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
DATA = TESTS / "data"
GOLDEN = TESTS / "golden"
SPECS = TESTS / "specs"
SEED = DATA / "003_ccacf97c43044eb5.txt"
SAMPLES = ROOT / "examples" / "reports"
