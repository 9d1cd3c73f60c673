"""How many searches run at once: a bound for the process and one for each person.

A search past either bound is refused at once (SearchBusy), not queued: a flood of slow
queries from one person must not hold the database connections, the pool or the event loop
that every other chat and the digest ticks need. Checking and counting happen with no await
between them, so the event loop makes them one step.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class SearchBusy(Exception):
    """Too many searches are running: everyone's (`everyone`), or this person's own."""

    def __init__(self, everyone: bool) -> None:
        self.everyone = everyone
        super().__init__("too many searches at once" if everyone else "your searches are running")


class SearchGate:
    """At most `total` searches at once in the process, and `per_user` of one person's."""

    def __init__(self, total: int, per_user: int) -> None:
        self.total = total
        self.per_user = per_user
        self.running = 0
        self.by_user: dict[str, int] = {}

    @asynccontextmanager
    async def admit(self, user: str) -> AsyncIterator[None]:
        """Run one search of `user`'s within the bounds; SearchBusy at once when past one."""
        if self.running >= self.total:
            raise SearchBusy(everyone=True)
        if self.by_user.get(user, 0) >= self.per_user:
            raise SearchBusy(everyone=False)
        self.running += 1
        self.by_user[user] = self.by_user.get(user, 0) + 1
        try:
            yield
        finally:
            self.running -= 1
            left = self.by_user[user] - 1
            if left:
                self.by_user[user] = left
            else:
                del self.by_user[user]
