"""Issue 14 #1: `prdigest ingest DIR` with poisoned files stores every good one and names each
bad file with its reason. Before, `"number": 10**30` ended in an OverflowError traceback and
none of the good files was stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from tests.kits.poison import POISONS, write_good, write_poison

pytestmark = pytest.mark.usefixtures("private_store")


def test_ingest_stores_the_good_files_and_names_each_poisoned_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    good = write_good(folder, 12)
    bad = {write_poison(folder, p, 500 + i): p for i, p in enumerate(POISONS)}
    assert main(["ingest", str(folder)]) == 1
    out, err = capsys.readouterr()
    assert out.strip().endswith(f"12 new, 0 updated, 0 unchanged, {len(bad)} failed")
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == len(bad)
    for path, poison in bad.items():
        assert any(line.startswith(f"error: {path}: ") and poison.reason in line for line in errors)
    assert main(["pr", str(good[-1]), "--format", "json"]) == 0
