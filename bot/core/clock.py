"""The wall clock, as a value the composition root hands out.

Everything that asks "what time is it" takes a `Clock`, so tests and benchmarks can set the
time instead of waiting for it; `utc_clock` is the one place the real time is read. The CLI
commands have no composition root of their own: they call `clock.utc_clock()` through this
module when they run, so whatever stands in for it then (a fixed or faster time) is what
they read.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

Clock = Callable[[], datetime]


def utc_clock() -> datetime:
    return datetime.now(UTC)


def human_time(moment: datetime, zone: str = "UTC") -> str:
    """`2026-12-03 09:00 UTC`, or in `zone` (`2026-12-03 17:00 Asia/Shanghai`, a chat's own
    zone): a time as the console, the CLI and the chats say it to a person."""
    if zone == "UTC":
        return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"{moment.astimezone(ZoneInfo(zone)).strftime('%Y-%m-%d %H:%M')} {zone}"
