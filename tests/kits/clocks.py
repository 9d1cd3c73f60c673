"""A clock a test moves by hand, in seconds (what the strict fakes read: `clock()` -> float)."""

from __future__ import annotations


class SecondsClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now
