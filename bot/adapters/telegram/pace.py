"""When each Telegram chat may get its next message, shared by digests and command replies.

The outbox paces its own rows, but command replies are sent directly: without one shared
account of what each chat received, a reply and a digest message could reach a chat within the
same second, or push a group past 20 messages a minute, and Telegram would answer 429. Digest
sends ask `wait_for` and are rescheduled when a chat is busy; replies wait for their turn.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

# Counted from when the previous message's answer came back: it reached Telegram before that,
# so no delay on the way (a slow connection, a paused process) can bring two arrivals closer
# together than they left. Counted from departures, a first request held up on the way by
# more than the headroom arrived within a second of the next one.
PER_CHAT_SECONDS = 1.0
GROUP_WINDOW_SECONDS = 61.0  # 20 messages per minute per group, with a second of headroom
GROUP_MAX_IN_WINDOW = 20


def is_group(chat_id: str) -> bool:
    """Groups, supergroups and channels have negative ids; private chats positive ones."""
    return chat_id.startswith("-")


class ChatPacer:
    """Per-chat send times, group windows and 429 holds for one bot, in this process."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, time_scale: float = 1.0
    ) -> None:
        self.clock = clock
        # Tests run against a fake whose flood windows are shrunk by the same factor.
        self.per_chat = PER_CHAT_SECONDS * time_scale
        self.group_window = GROUP_WINDOW_SECONDS * time_scale
        self._last: dict[str, float] = {}
        self._windows: dict[str, deque[float]] = {}
        self._held_until: dict[str, float] = {}

    def wait_for(self, chat_id: str) -> float:
        """Seconds until a message to `chat_id` stays within the limits (0: now)."""
        now = self.clock()
        waits = [self._held_until.get(chat_id, 0.0) - now]
        last = self._last.get(chat_id)
        if last is not None:
            waits.append(last + self.per_chat - now)
        window = self._window(chat_id, now)
        if window is not None and len(window) >= GROUP_MAX_IN_WINDOW:
            waits.append(window[0] + self.group_window - now)
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
        while window and window[0] <= now - self.group_window:
            window.popleft()
        return window
