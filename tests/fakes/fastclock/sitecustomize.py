"""A fast wall clock for `prdigest` subprocesses, so a test sees a minute's cron fire every
few seconds without a seconds field in production cron.

Put this folder first on PYTHONPATH and set `PRDIGEST_FAST_CLOCK="<start epoch> <scale>"`:
from `start` on the bot's clock runs `scale` times faster than the real one. Every process
given the same start reads the same time, so replicas agree on which fire time is due.

The bot reads the time only through `bot.core.clock.utc_clock`; replacing it here, before any
other bot module imports it, reaches every `clock=utc_clock` default too. Only one
sitecustomize runs, so this one installs the network guard as tests/netguard's would.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

import netguard  # noqa: F401  (installs the guard)

FAST_CLOCK_ENV = "PRDIGEST_FAST_CLOCK"


def _install(setting: str) -> None:
    import bot.core.clock

    start, scale = (float(part) for part in setting.split())

    def fast_clock() -> datetime:
        return datetime.fromtimestamp(start + (time.time() - start) * scale, UTC)

    bot.core.clock.utc_clock = fast_clock


if setting := os.environ.get(FAST_CLOCK_ENV):
    _install(setting)
