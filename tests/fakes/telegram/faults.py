"""Scripted failures and flood limits of the fake Telegram Bot API.

Faults are scripted per chat (`fake.script(chat_id, Fault.retry_after(34), Fault.blocked())`) and
answer the next calls that name that chat, one fault per call, in order; a sticky fault
(`Fault.blocked_forever`, `Fault.migrated(...)`, `fault.forever()`) answers every call after it.

Flood limits follow https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this
strictly (no bursts): one message per chat per second, 20 per minute per group, 30 per second
overall. Time is the fake's clock, and `time_scale` shrinks every window (0.1 → 10x faster).
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal

FaultAction = Literal["answer", "reset_after_accept", "stall"]


@dataclass(frozen=True)
class Fault:
    """One scripted answer for a call naming a chat."""

    status: int = 200
    description: str = ""
    parameters: dict[str, object] | None = None
    action: FaultAction = "answer"
    stall_seconds: float = 0.0
    sticky: bool = False

    blocked_forever: ClassVar[Fault]

    @classmethod
    def blocked(cls) -> Fault:
        return cls(403, "Forbidden: bot was blocked by the user")

    @classmethod
    def kicked(cls) -> Fault:
        return cls(403, "Forbidden: bot was kicked from the group chat")

    @classmethod
    def migrated(cls, new_chat_id: int) -> Fault:
        """Sticky: once a group is upgraded, every call to its old id answers this."""
        description = "Bad Request: group chat was upgraded to a supergroup chat"
        return cls(400, description, {"migrate_to_chat_id": new_chat_id}, sticky=True)

    @classmethod
    def retry_after(cls, seconds: int) -> Fault:
        description = f"Too Many Requests: retry after {seconds}"
        return cls(429, description, {"retry_after": seconds})

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        return cls(status, "Internal Server Error")

    @classmethod
    def reset_after_accept(cls) -> Fault:
        """The message is accepted (recorded, gets an id), then the connection is reset."""
        return cls(action="reset_after_accept")

    @classmethod
    def stall(cls, seconds: float) -> Fault:
        """The message is accepted, but the answer comes only after `seconds`."""
        return cls(action="stall", stall_seconds=seconds)

    def forever(self) -> Fault:
        """This fault answers every later call too."""
        return replace(self, sticky=True)

    @property
    def is_error(self) -> bool:
        return self.action == "answer"


Fault.blocked_forever = Fault.blocked().forever()


class FaultScript:
    """The queue of scripted faults per chat."""

    def __init__(self) -> None:
        self._queues: dict[int, deque[Fault]] = {}

    def add(self, chat_id: int, faults: tuple[Fault, ...]) -> None:
        self._queues.setdefault(chat_id, deque()).extend(faults)

    def next_for(self, chat_id: int) -> Fault | None:
        queue = self._queues.get(chat_id)
        if not queue:
            return None
        fault = queue[0]
        if not fault.sticky:
            queue.popleft()
        return fault

    def pending(self, chat_id: int) -> int:
        return len(self._queues.get(chat_id, ()))


@dataclass
class FloodLimits:
    per_chat_per_s: int = 1
    per_group_per_min: int = 20
    global_per_s: int = 30
    enforce: bool = True
    time_scale: float = 1.0


FloodRule = Literal["chat", "group", "global", "penalty"]


@dataclass(frozen=True)
class FloodEvent:
    """A call over a limit (`rule`), or made before an earlier retry_after ran out ("penalty")."""

    chat_id: int
    rule: FloodRule
    retry_after: int
    time: float


@dataclass
class FloodGate:
    """Sliding windows of accepted sends, and the retry_after windows the fake announced."""

    limits: FloodLimits
    clock: Callable[[], float]
    violations: list[FloodEvent] = field(default_factory=list)
    early_retries: list[FloodEvent] = field(default_factory=list)
    count_429: Counter[int] = field(default_factory=Counter)
    _per_chat: dict[int, deque[float]] = field(default_factory=dict)
    _per_group: dict[int, deque[float]] = field(default_factory=dict)
    _overall: deque[float] = field(default_factory=deque)
    _penalties: dict[int, tuple[float, bool]] = field(default_factory=dict)

    def announce_retry_after(self, chat_id: int, seconds: int, enforced: bool) -> None:
        """Remember a 429 the fake sent: calls to the chat before it runs out are early."""
        self._penalties[chat_id] = (self.clock() + seconds, enforced)

    def admit(self, chat_id: int) -> FloodEvent | None:
        """None if a send to `chat_id` may go now (and count it), else the 429 to answer."""
        now = self.clock()
        event = self._early_retry(chat_id, now) or self._over_limit(chat_id, now)
        if event is not None and event.rule != "penalty":
            self.violations.append(event)
        if event is None or not self.limits.enforce:
            self._count_send(chat_id, now)
            return None
        self.count_429[chat_id] += 1
        if event.rule != "penalty":
            self.announce_retry_after(chat_id, event.retry_after, enforced=True)
        return event

    def _early_retry(self, chat_id: int, now: float) -> FloodEvent | None:
        until, enforced = self._penalties.get(chat_id, (0.0, False))
        if now >= until:
            return None
        event = FloodEvent(chat_id, "penalty", max(1, math.ceil(until - now)), now)
        self.early_retries.append(event)
        return event if enforced else None

    def _over_limit(self, chat_id: int, now: float) -> FloodEvent | None:
        scale = self.limits.time_scale
        windows: list[tuple[FloodRule, deque[float], int, float]] = [
            (
                "chat",
                self._per_chat.setdefault(chat_id, deque()),
                self.limits.per_chat_per_s,
                scale,
            ),
            ("global", self._overall, self.limits.global_per_s, scale),
        ]
        if chat_id < 0:
            group = self._per_group.setdefault(chat_id, deque())
            windows.insert(1, ("group", group, self.limits.per_group_per_min, 60 * scale))
        for rule, sends, limit, window in windows:
            while sends and sends[0] <= now - window:
                sends.popleft()
            if len(sends) >= limit:
                wait = sends[0] + window - now
                return FloodEvent(chat_id, rule, max(1, math.ceil(wait)), now)
        return None

    def _count_send(self, chat_id: int, now: float) -> None:
        self._per_chat.setdefault(chat_id, deque()).append(now)
        self._overall.append(now)
        if chat_id < 0:
            self._per_group.setdefault(chat_id, deque()).append(now)
