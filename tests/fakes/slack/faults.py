"""Scripted failures for the fake Slack: queued per method (and channel), one per matching call."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class FaultKind(StrEnum):
    RATE_LIMITED = "rate_limited"
    SERVER_ERROR = "server_error"
    ERROR = "error"
    RESET_AFTER_ACCEPT = "reset_after_accept"
    DELAY = "delay"


@dataclass(frozen=True)
class Fault:
    """One scripted misbehaviour; build it with the class methods."""

    kind: FaultKind
    status: int = 200
    retry_after: str | None = None
    error_code: str = ""
    seconds: float = 0.0
    content_type: str = "text/html"
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def rate_limited(cls, retry_after: str | None = "1") -> Fault:
        """HTTP 429 `ratelimited`; `Retry-After` is sent verbatim ("abc", "7.5", "") or not at all
        when None, so tests can feed the bot the bad headers real proxies produce."""
        return cls(FaultKind.RATE_LIMITED, status=429, retry_after=retry_after)

    @classmethod
    def server_error(cls, status: int = 500, content_type: str = "text/html") -> Fault:
        """An error page with a 5xx status, as Slack's edge answers when it is down; a proxy
        may send it as `text/plain` (or mislabel it `application/json`)."""
        return cls(FaultKind.SERVER_ERROR, status=status, content_type=content_type)

    @classmethod
    def error(cls, error_code: str, status: int = 200, **extra: Any) -> Fault:
        """`{"ok": false, "error": error_code, **extra}`, e.g. `token_revoked`, `not_in_channel`."""
        return cls(FaultKind.ERROR, status=status, error_code=error_code, extra=extra)

    @classmethod
    def reset_after_accept(cls) -> Fault:
        """Accept (and record) the call, then reset the connection without answering.

        A call the fake refuses is answered as usual: only an accepted call can be ambiguous.
        """
        return cls(FaultKind.RESET_AFTER_ACCEPT)

    @classmethod
    def delay(cls, seconds: float) -> Fault:
        """Wait before handling the call normally (a stall past the client's timeout)."""
        return cls(FaultKind.DELAY, seconds=seconds)


class FaultScript:
    """Queues of faults; a call takes from its channel's queue first, then the method's."""

    def __init__(self) -> None:
        self._queues: defaultdict[tuple[str, str | None], deque[Fault]] = defaultdict(deque)

    def add(self, method: str, faults: tuple[Fault, ...], channel: str | None) -> None:
        self._queues[(method, channel)].extend(faults)

    def take(self, method: str, channel: str | None) -> Fault | None:
        keys = [(method, channel), (method, None)] if channel else [(method, None)]
        for key in keys:
            queue = self._queues.get(key)
            if queue:
                return queue.popleft()
        return None

    def pending(self) -> int:
        """Faults not yet consumed: a test can assert its script was used up."""
        return sum(len(queue) for queue in self._queues.values())
