"""`prdigest migrate` rebuilds the full-text index and says how many reports it indexed."""

from __future__ import annotations

import subprocess
import sys

from bot.core.store.sql.db import HEAD_REVISION
from tests.kits.paths import ROOT, SEED


def test_migrate_rebuilds_the_index(subprocess_env: dict[str, str]) -> None:
    def prdigest(*argv: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "bot", *argv],
            cwd=ROOT, env=subprocess_env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    prdigest("ingest", str(SEED))
    out = prdigest("migrate").splitlines()
    assert out == [
        f"database at revision {HEAD_REVISION}",
        "search index rebuilt: 1 report indexed",
    ]
