"""Fixtures the command-line tests share."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def private_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SQLite file of the test's own, the built-in config, and no platform credentials."""
    monkeypatch.setenv("BOT_DATABASE_URL", f"sqlite:///{tmp_path / 'bot.db'}")
    monkeypatch.setenv("BOT_CONFIG", "")
    for name in ("SLACK_BOT_TOKEN", "TELEGRAM_BOT_TOKEN", "SLACK_APP_TOKEN"):
        monkeypatch.delenv(name, raising=False)
