"""The wall clock as the CLI commands read it, set by a test."""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.kits.delivery import FakeClock


def set_wall_clock(monkeypatch: pytest.MonkeyPatch, at: datetime) -> FakeClock:
    """Make `at` the time every CLI command reads, until the test ends; move it through the
    clock returned. The commands call `bot.core.clock.utc_clock` when they run (the function
    the subprocess tests' fast clock replaces too); a `clock=utc_clock` default bound when its
    module was imported keeps the real time."""
    fake = FakeClock(at)
    monkeypatch.setattr("bot.core.clock.utc_clock", fake)
    return fake
