"""What a Sender reports for one message, and what a Sender is: the words the Deliverer and
the platform adapters share (bot/core/delivery/deliverer.py re-exports them)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from bot.core.models import Platform


# --- outcomes a Sender reports -------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Sent:
    external_id: str | None = None


@dataclass(frozen=True, slots=True)
class RetryAfter:
    """The platform asked us to wait (429). Not a failure; the row is rescheduled."""

    seconds: float
    reason: str = "rate limited"


@dataclass(frozen=True, slots=True)
class Transient:
    """5xx, timeout, connection reset: back off with jitter, the row stays pending."""

    reason: str


@dataclass(frozen=True, slots=True)
class Blocked:
    """The bot was blocked or kicked: deactivate after BLOCKED_LIMIT in a row."""

    reason: str


@dataclass(frozen=True, slots=True)
class Gone:
    """The destination no longer exists for us (archived, not found, token revoked)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Moved:
    """The chat has a new id (Telegram group → supergroup); resend there."""

    new_target: str


@dataclass(frozen=True, slots=True)
class Rejected:
    """The platform will never accept this message; it is failed and reported."""

    reason: str


@dataclass(frozen=True, slots=True)
class Withheld:
    """Not sent: no turn came (stopping, or the row waited past half its lease). The row is
    given back, pending again at once."""

    reason: str = "no turn"


Outcome = Sent | RetryAfter | Transient | Blocked | Gone | Moved | Rejected | Withheld

Turn = Callable[[], Awaitable[bool]]
"""The platform pace's go-ahead for one row; False: do not send it (`Withheld`).

A sender awaits it as late as it can, inside any admission of its own (Telegram's arrival
window): a turn taken first and then held up there would leave in a bunch with the turns
behind it, and the platform counts arrivals, across every replica."""


class Sender(Protocol):
    platform: Platform
    max_per_second: float  # the platform's overall pace for this bot

    def interval_for(self, target: str) -> float:
        """Seconds between two messages to the same destination."""
        ...

    async def send(self, target: str, payload: Mapping[str, object], turn: Turn) -> Outcome: ...


@runtime_checkable
class WarmsUp(Protocol):
    """A sender whose first requests would open new connections at once."""

    async def warm_up(self) -> None:
        """Open a connection before a burst (errors are the first send's to report)."""
        ...


@runtime_checkable
class Reconciles(Protocol):
    """A sender that can tell whether an earlier attempt reached the platform (Slack: the row's
    key in the message's metadata, read back with the channel's history). Its rows are then
    sent exactly once; others at least once (one copy more per kill inside a send)."""

    def tagged(self, payload: Mapping[str, object], key: str) -> dict[str, object]:
        """The payload carrying the row's key, as the platform will store it."""
        ...

    async def find_sent(
        self, target: str, payload: Mapping[str, object], key: str, since: datetime
    ) -> Sent | None:
        """The message with `key` posted since `since`, if there is one (None if not, or if
        the platform cannot say: then it is sent)."""
        ...
