"""The delivery port: what a platform's sender is, and the words it answers in.

The one module of `bot.core.delivery` an adapter imports. A Sender (one per platform, in
`bot/adapters/`) turns a payload into one API call and reports a typed outcome; the Deliverer
(`deliverer.py`) decides what each outcome means for the ledger. A sender may do more, each
capability a protocol the Deliverer looks for: warm up its connection (`WarmsUp`), find an
earlier attempt that reached the platform (`Reconciles`), reply in threads and open forum
topics (`Threads`, used by `threads.py`).
"""

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


# --- threads and forum topics ----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Placement:
    """Where in the chat a message goes; None: the chat itself."""

    reply_to: str | None = None  # the parent message's platform id
    thread: str | None = None  # the forum topic's thread id


@dataclass(frozen=True, slots=True)
class Opened:
    thread: str


@dataclass(frozen=True, slots=True)
class NotForum:
    """The chat has no topics (not a forum supergroup): post flat."""

    reason: str


@dataclass(frozen=True, slots=True)
class Refused:
    """The platform will not open this topic (the bot may not manage topics...): this message
    goes to the chat itself; a later one tries again."""

    reason: str


TopicAnswer = Opened | NotForum | Refused | Outcome
"""What asking for a forum topic ends with: opened, none to be had, or the send outcome the
call ended with (a 429, a 5xx...), recorded for the row as if its send had ended so."""


@runtime_checkable
class Threads(Protocol):
    """A sender that can reply in a thread and open forum topics. A sender without it (the
    console) gets every message flat."""

    def placed(self, payload: Mapping[str, object], placement: Placement) -> dict[str, object]:
        """The payload, sent where `placement` says."""
        ...

    async def open_topic(self, target: str, name: str) -> TopicAnswer:
        """`Opened`, `NotForum`, `Refused`, or the send outcome the call ended with."""
        ...

    def topic_gone(self, reason: str) -> bool:
        """Whether a refused send means its forum topic no longer exists (deleted in the chat)."""
        ...
