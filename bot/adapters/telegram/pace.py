"""Telegram's flood limits, and when each chat may get its next message (digests and command
replies alike). The one place Telegram's pacing numbers live.

The outbox paces its own rows, but command replies are sent directly: without one shared
account of what each chat received, a reply and a digest message could reach a chat within the
same second, or push a group past 20 messages a minute, and Telegram would answer 429. Digest
sends ask `wait_for` and are rescheduled when a chat is busy; replies wait for their turn.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

# Counted from when the previous message's answer came back: it reached Telegram before that,
# so no delay on the way (a slow connection, a paused process) can bring two arrivals closer
# together than they left. Counted from departures, a first request held up on the way by
# more than the headroom arrived within a second of the next one.
TELEGRAM_PER_CHAT_SECONDS = 1.0  # ≤ 1 message per second per chat
# 20 messages per minute per group, with a second of headroom
TELEGRAM_GROUP_WINDOW_SECONDS = 61.0
TELEGRAM_GROUP_MAX_IN_WINDOW = 20
TELEGRAM_OVERALL_LIMIT = 30  # messages per second to all chats together
TELEGRAM_OVERALL_SECONDS = 1.0
# The pace plans 29.7/s; the arrival window (see `ArrivalWindow`) makes sure that, however the
# requests bunch on the way, no second holds more than 30 arrivals.
TELEGRAM_MAX_PER_SECOND = 29.7


def is_group(chat_id: str) -> bool:
    """Groups, supergroups and channels have negative ids; private chats positive ones."""
    return chat_id.startswith("-")


@dataclass(frozen=True)
class TelegramLimits:
    """The limits one bot keeps to; the defaults are Telegram's. A fake Bot API whose windows
    are shorter gets a bot with the same shorter windows."""

    per_chat_seconds: float = TELEGRAM_PER_CHAT_SECONDS
    group_window_seconds: float = TELEGRAM_GROUP_WINDOW_SECONDS
    group_max_in_window: int = TELEGRAM_GROUP_MAX_IN_WINDOW
    overall_limit: int = TELEGRAM_OVERALL_LIMIT
    overall_seconds: float = TELEGRAM_OVERALL_SECONDS
    max_per_second: float = TELEGRAM_MAX_PER_SECOND

    def interval_for(self, chat_id: str) -> float:
        """The outbox's spacing between two messages to one chat: a group's window spread
        evenly (the `ChatPacer` holds any message that would still overfill it)."""
        if is_group(chat_id):
            return self.group_window_seconds / self.group_max_in_window
        return self.per_chat_seconds


class ChatPacer:
    """Per-chat send times, group windows and 429 holds for one bot, in this process."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        limits: TelegramLimits = TelegramLimits(),
    ) -> None:
        self.clock = clock
        self.limits = limits
        self._last: dict[str, float] = {}
        self._windows: dict[str, deque[float]] = {}
        self._held_until: dict[str, float] = {}

    def wait_for(self, chat_id: str) -> float:
        """Seconds until a message to `chat_id` stays within the limits (0: now)."""
        now = self.clock()
        waits = [self._held_until.get(chat_id, 0.0) - now]
        last = self._last.get(chat_id)
        if last is not None:
            waits.append(last + self.limits.per_chat_seconds - now)
        window = self._window(chat_id, now)
        if window is not None and len(window) >= self.limits.group_max_in_window:
            waits.append(window[0] + self.limits.group_window_seconds - now)
        return max(0.0, *waits)

    def record(self, chat_id: str) -> None:
        """A message to `chat_id` leaves now (the chat is busy until its answer)."""
        now = self.clock()
        self._last[chat_id] = now
        window = self._window(chat_id, now)
        if window is not None:
            window.append(now)

    def answered(self, chat_id: str) -> None:
        """The answer to the message last sent to `chat_id` came back (or the request failed):
        the next one counts from now, a time the message had surely reached Telegram by."""
        now = self.clock()
        self._last[chat_id] = now
        window = self._window(chat_id, now)
        if window:
            window[-1] = now

    def hold(self, chat_id: str, seconds: float) -> None:
        """Telegram said "retry after `seconds`" for this chat: nothing goes there before."""
        until = self.clock() + seconds
        self._held_until[chat_id] = max(self._held_until.get(chat_id, 0.0), until)

    def _window(self, chat_id: str, now: float) -> deque[float] | None:
        if not is_group(chat_id):
            return None
        window = self._windows.setdefault(chat_id, deque())
        while window and window[0] <= now - self.limits.group_window_seconds:
            window.popleft()
        return window
