"""The wall clock, as a value the composition root hands out.

Everything that asks "what time is it" takes a `Clock`, so tests and benchmarks can set the
time instead of waiting for it; `utc_clock` is the one place the real time is read.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utc_clock() -> datetime:
    return datetime.now(UTC)


def human_time(moment: datetime) -> str:
    """`2026-12-03 09:00 UTC`: a time as the console and the CLI say it to a person."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
