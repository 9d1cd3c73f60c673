"""`prdigest check-config` says every query's budget: terms, time, searches at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main


def test_check_config_prints_the_query_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BOT_DATABASE_URL", f"sqlite:///{tmp_path / 'bot.db'}")
    monkeypatch.setenv("BOT_CONFIG", "")
    assert main(["check-config"]) == 0
    defaults = "queries:   at most 64 terms, 5s each, 4 searches at once (1 per person)"
    assert defaults in capsys.readouterr().out.splitlines()
    path = tmp_path / "bot.yaml"
    path.write_text(
        "search: {timeout_seconds: 2.5, max_concurrent: 8, max_per_user: 2}\n", encoding="utf-8"
    )
    monkeypatch.setenv("BOT_CONFIG", str(path))
    assert main(["check-config"]) == 0
    tuned = "queries:   at most 64 terms, 2.5s each, 8 searches at once (2 per person)"
    assert tuned in capsys.readouterr().out.splitlines()
    path.write_text("search: {timeout_seconds: 0}\n", encoding="utf-8")
    assert main(["check-config"]) == 2
    assert "search.timeout_seconds" in capsys.readouterr().err
