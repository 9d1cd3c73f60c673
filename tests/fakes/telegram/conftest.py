"""Fixtures the Telegram fake's own tests share."""

from __future__ import annotations

import pytest

from tests.kits.clocks import SecondsClock


@pytest.fixture(autouse=True)
def _retry_after_as_timedelta(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # PTB's future behaviour, without its warning


@pytest.fixture
def clock() -> SecondsClock:
    return SecondsClock()
