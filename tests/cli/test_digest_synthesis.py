"""`prdigest digest NAME --dry-run` shows the weekly synthesis for a cadence longer than a day
(as the scheduled run does), and a daily digest goes straight to its tag groups."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from tests.kits.paths import ROOT

SAMPLES = ROOT / "examples" / "reports"


def _dry_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cadence: str) -> None:
    path = tmp_path / "bot.yaml"
    path.write_text(
        "locale: en\nchannels:\n"
        f"  - {{name: team, platform: console, target: stdout, cadence: '{cadence}'}}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("BOT_CONFIG", str(path))
    assert main(["digest", "team", "--dry-run"]) == 0


@pytest.mark.usefixtures("private_store")
@pytest.mark.parametrize(
    ("cadence", "weekly"), [("weekly fri 17:00", True), ("daily 09:00", False)]
)
def test_only_a_cadence_longer_than_a_day_opens_with_the_synthesis(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    cadence: str,
    weekly: bool,
) -> None:
    assert main(["ingest", "-q", str(SAMPLES)]) == 0
    capsys.readouterr()
    _dry_run(tmp_path, monkeypatch, cadence)
    out = capsys.readouterr().out
    assert ("== Synthesis ==" in out) is weekly
    assert ("== Breaking changes ==" in out) is weekly
    assert "[rollout]" in out and "#7422" in out
