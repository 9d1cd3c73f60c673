"""Telegram's flood limits kept, and when each chat may get its next message (digests and
command replies alike). The numbers are Telegram's (bot/core/render/limits/telegram.py).

The outbox paces its own rows, but command replies are sent directly: without one shared
account of what each chat received, a reply and a digest message could reach a chat within the
same second, or push a group past 20 messages a minute, and Telegram would answer 429. Digest
sends ask `wait_for` and are rescheduled when a chat is busy; replies wait for their turn. The
`ArrivalWindow` keeps every message of the bot within the overall limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from bot.core.render.limits.telegram import (
    TELEGRAM_GROUP_MAX_IN_WINDOW,
    TELEGRAM_GROUP_WINDOW_SECONDS,
    TELEGRAM_MAX_PER_SECOND,
    TELEGRAM_OVERALL_LIMIT,
    TELEGRAM_OVERALL_SECONDS,
    TELEGRAM_PER_CHAT_SECONDS,
)


def is_group(chat_id: str) -> bool:
    """Groups, supergroups and channels have negative ids; private chats positive ones."""
    return chat_id.startswith("-")


@dataclass(frozen=True)
class TelegramLimits:
    """The limits one bot keeps to; the defaults are Telegram's. A fake Bot API whose windows
    are shorter gets a bot with the same shorter windows.

    A chat's spacing counts from when the previous message's answer came back: it reached
    Telegram before that, so no delay on the way (a slow connection, a paused process) can
    bring two arrivals closer together than they left. Counted from departures, a first
    request held up on the way by more than the headroom arrived within a second of the next."""

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


class ArrivalWindow:
    """At most `limit` requests reach the platform in any `seconds`, whatever the jitter.

    A pace plans when requests leave; the platform counts when they arrive, and a request that
    left on time can arrive late (a busy event loop, a slow connection) and bunch with the ones
    behind it. Only two times are known for sure: a request arrived after it left and before its
    answer came back. So request n leaves only once every request up to n - `limit` has been
    answered and `seconds` have passed since the last of those answers: then at most `limit`
    arrivals can fall in any window, and the cost is one round trip per window (a few ms on a
    near API). A request that stays unanswered for `seconds` stops holding up the rest, and
    counts as answered then; it was most likely refused or lost. A place given up without
    sending (`Place.unused`: the pace said no, the chat was busy) holds nobody up.
    """

    def __init__(self, limit: int, seconds: float) -> None:
        if limit < 1 or seconds <= 0:
            raise ValueError(
                f"an arrival window needs limit ≥ 1 and seconds > 0, not {limit}, {seconds}"
            )
        self.limit = limit
        self.seconds = seconds
        self._recent: deque[asyncio.Future[float | None]] = deque()
        self._horizon = float("-inf")  # the latest answer among requests out of `_recent`
        self._lock = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[Place]:
        """Around one request: waits for its turn, records when its answer came back."""
        answered: asyncio.Future[float | None] = asyncio.get_running_loop().create_future()
        place = Place()
        async with self._lock:
            while len(self._recent) >= self.limit:
                await self._retire(self._recent[0])
                self._recent.popleft()  # only once retired: a cancelled wait keeps its place
            delay = self._horizon + self.seconds - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            self._recent.append(answered)
        try:
            yield place
        finally:
            answered.set_result(time.monotonic() if place.used else None)

    async def _retire(self, answered: asyncio.Future[float | None]) -> None:
        try:
            at = await asyncio.wait_for(asyncio.shield(answered), self.seconds)
        except TimeoutError:
            at = time.monotonic()
        if at is not None:
            self._horizon = max(self._horizon, at)


class Place:
    """One request's place in an `ArrivalWindow`."""

    def __init__(self) -> None:
        self.used = True

    def unused(self) -> None:
        """Nothing was sent from this place: it reached nobody, so it holds nobody up."""
        self.used = False
