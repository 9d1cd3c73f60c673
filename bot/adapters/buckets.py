"""A token bucket per user: how many chat requests a person may make at once and over time.

At most MAX_TRACKED_USERS users are remembered, the ones seen least recently forgotten first
(a forgotten user starts with a full bucket), so a flood of new user ids cannot grow memory.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

Clock = Callable[[], float]  # monotonic seconds

MAX_TRACKED_USERS = 10_000  # token buckets (and busy-notice times) remembered at once
FULL_MARGIN = 0.5  # tokens a bucket may miss and still count as full


class TokenBuckets:
    """A token bucket per user: `burst` tokens, refilled at `per_minute`."""

    def __init__(
        self, burst: int, per_minute: float, clock: Clock, max_users: int = MAX_TRACKED_USERS
    ) -> None:
        self.burst = float(burst)
        self.per_second = per_minute / 60.0
        self.clock = clock
        self.max_users = max_users
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # tokens, at

    def __len__(self) -> int:
        return len(self._buckets)

    def _tokens(self, user: str, now: float) -> float:
        tokens, at = self._buckets.get(user, (self.burst, now))
        return min(self.burst, tokens + (now - at) * self.per_second)

    def has_token(self, user: str) -> bool:
        """Whether `take` would succeed now (nothing is taken)."""
        return self._tokens(user, self.clock()) >= 1.0

    def is_full(self, user: str) -> bool:
        """Whether `user`'s bucket is full (within half a token): no request for a while."""
        return self._tokens(user, self.clock()) >= self.burst - FULL_MARGIN

    def take(self, user: str) -> bool:
        """Take one of the user's tokens; False (nothing taken) when the bucket is empty."""
        now = self.clock()
        tokens = self._tokens(user, now)
        if tokens < 1.0:
            return False
        self._buckets[user] = (tokens - 1.0, now)
        self._buckets.move_to_end(user)
        while len(self._buckets) > self.max_users:
            self._buckets.popitem(last=False)
        return True
