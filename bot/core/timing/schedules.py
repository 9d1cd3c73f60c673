"""Schedules as people write them: `09:00`, `09:00 mon-fri`, or a 5-field cron.

The chat's `/schedule 09:00` and the config's `schedule: "09:00"` read a clock time the same
way, here: `09:00` is `0 9 * * *` (every day), `09:00 mon-fri` is `0 9 * * mon-fri`.
"""

from __future__ import annotations

import re

HHMM = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
DAYS = re.compile(r"[a-z]{3}(-[a-z]{3})?(,[a-z]{3}(-[a-z]{3})?)*")


def is_days(text: str) -> bool:
    """`mon-fri`, `sat,sun`, `mon,wed-fri`: day names a clock time may be followed by."""
    return DAYS.fullmatch(text.lower()) is not None


def clock_cron(clock: str, days: str = "*") -> str | None:
    """`09:00` → `0 9 * * *`; with days `mon-fri` → `0 9 * * mon-fri`. None if `clock` is not
    a 24-hour HH:MM time."""
    match = HHMM.match(clock)
    if match is None:
        return None
    return f"{int(match[2])} {int(match[1])} * * {days.lower()}"


def schedule_cron(text: str) -> str:
    """A schedule as written in the config: `09:00` or `09:00 mon-fri` become cron, as
    `/schedule` reads them; anything else is returned unchanged (a cron, checked elsewhere)."""
    parts = text.split()
    if len(parts) == 1 or (len(parts) == 2 and is_days(parts[1])):
        cron = clock_cron(parts[0], parts[1] if len(parts) == 2 else "*")
        if cron is not None:
            return cron
    return text
