"""What every fire-time search shares: the cron engine's answer and the bound on looking ahead."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Final

from bot.core.calendar.model import MAX_DAYS_AHEAD

# (cron, timezone, after) -> the first fire time >= after; ValueError if none within HORIZON.
NextFire = Callable[[str, str, datetime], datetime]

HORIZON: Final = timedelta(days=MAX_DAYS_AHEAD)  # a schedule must fire within this span
