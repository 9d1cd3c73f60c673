"""Chat work with a bound: one queue per platform, a rate per user, "busy" beyond them.

A flood of commands (hundreds of connections of signed slash commands or webhook updates)
must not become one task per request: tens of thousands of answers waiting, hundreds of MB,
a new user's `/pr` minutes behind, and a shutdown that waits for all of them. So each
platform's adapter hands its answers to a `WorkQueue`:

- at most `WorkLimits.workers` answers run at a time, and at most `queue_length` wait;
- each user has a token bucket: `per_user_burst` requests at once, refilled at
  `per_user_per_minute` (every request takes a token, taken or refused), so one busy user
  cannot fill the queue for everyone;
- a user whose bucket is full (they have not asked for a while: a person, not a flood) goes
  ahead of the others, and may take `queue_length // 4` places more than the others may: the
  first user after a flood is answered behind the answers running, not refused behind a
  full queue; when even those places are taken, their job takes the place of the newest
  queued job of a user who is over their rate now (that job is dropped, its user told busy
  through `bumped`), so a flood's own first requests cannot keep the places a person needs;
- beyond either bound, `submit` refuses at once (the job is never started) and the adapter
  answers "busy, try again in a minute": in the ack's own body where it costs nothing
  (Slack's ephemeral ack, Telegram's webhook answer), else as one small message, sent to a
  user at most once a minute (`busy_notice_due`) and only while few are in flight
  (`tell_busy`);
- on shutdown (`stop_taking`, then `stop`), no more work is taken, what is still queued is
  dropped and counted in one log line, and the answers already running get a bounded grace
  to finish their sends before they are cancelled.

The per-user state is bounded too: at most `MAX_TRACKED_USERS` users are remembered, the
ones seen least recently are forgotten first (a forgotten user starts with a full bucket).
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from bot.adapters.buckets import MAX_TRACKED_USERS, TokenBuckets
from bot.chat.answers import Notice
from bot.logs import log

logger = logging.getLogger("prdigest.work")

Job = Callable[[], Awaitable[None]]  # started only when a worker takes it
Work = Coroutine[Any, Any, None]
Clock = Callable[[], float]  # monotonic seconds

BUSY = Notice("busy")
BUSY_NOTICE_EVERY_SECONDS = 60.0  # "try again in a minute": a user hears it once a minute
MAX_BUSY_NOTICES_AT_ONCE = 4  # busy notices that cost a message, in flight at once
DEFAULT_STOP_GRACE_SECONDS = 4.0  # answers running at shutdown may finish their sends
BUSY_LOG_EVERY_SECONDS = 5.0  # while work is refused, one log line this often, with a count


@dataclass(frozen=True)
class WorkLimits:
    """How much chat work one platform takes on. The defaults answer a team's use at once
    and keep a flood's backlog to a few seconds of work."""

    queue_length: int = 32  # answers waiting for a worker; beyond it: busy
    workers: int = 8  # answers running at once
    per_user_burst: int = 5  # answers a user may ask for at once
    per_user_per_minute: float = 20.0  # and then this many a minute


Dropped = Callable[[], None]


def _nothing() -> None:
    """A job with nothing to close when it is dropped."""


@dataclass(frozen=True, order=True)
class Queued:
    lane: int
    order: int
    job: Job = field(compare=False)
    dropped: Dropped = field(compare=False)
    chat: str = field(default="", compare=False)
    user: str = field(default="", compare=False)
    bumped: Dropped = field(default=_nothing, compare=False)


def reserved_for_fresh(limits: WorkLimits) -> int:
    """The places past `queue_length` that only users with a full bucket may take."""
    return max(1, limits.queue_length // 4)


class Admission(enum.Enum):
    TAKEN = "taken"
    QUEUE_FULL = "queue_full"
    USER_LIMITED = "user_limited"
    STOPPING = "stopping"


class WorkQueue:
    """One platform's chat work (see the module docstring)."""

    def __init__(
        self,
        platform: str,
        limits: WorkLimits | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self.platform = platform
        self.limits = limits or WorkLimits()
        self.clock = clock
        self.buckets = TokenBuckets(
            self.limits.per_user_burst, self.limits.per_user_per_minute, clock
        )
        # (0: a fresh user's, 1: the others'; the order taken; the job, what drops it)
        self._queue: asyncio.PriorityQueue[Queued] | None = None
        # The jobs waiting, by order taken: one pushed out leaves here at once and is skipped
        # when a worker meets it in the queue.
        self._waiting: dict[int, Queued] = {}
        self._taken = 0
        self._in_chat: Counter[str] = Counter()  # jobs queued (not yet taken), by chat
        self._workers: list[asyncio.Task[None]] = []
        self._running: set[asyncio.Task[None]] = set()
        self._notices: set[asyncio.Task[None]] = set()
        self._told_busy: OrderedDict[str, float] = OrderedDict()
        self._stopping = False
        self._stopped_at = 0.0
        self.refused = 0  # refused since the last `busy` log line
        self._refused_logged_at = float("-inf")

    @property
    def queued(self) -> int:
        return len(self._waiting)

    @property
    def running(self) -> int:
        return len(self._running)

    def submit(
        self,
        user: str,
        job: Job,
        dropped: Dropped = _nothing,
        chat: str = "",
        bumped: Dropped = _nothing,
    ) -> Admission:
        """Queue `job` for `user` in `chat`, or refuse it at once. A job refused, or dropped
        from the queue at shutdown, is never started: `dropped` is called instead (to close
        what the job would have awaited); one pushed out of the queue by a fresh user's also
        calls `bumped` (to tell its user busy). The jobs of one chat leave the queue in the
        order they came: a fresh user's goes ahead only of other chats' work."""
        admission, lane, pushed = self._admission(user, chat)
        self._count(user, admission)
        if admission is not Admission.TAKEN:
            dropped()
            return admission
        if pushed is not None:
            self._push_out(pushed)
        self._taken += 1
        self._in_chat[chat] += 1
        queued = Queued(lane, self._taken, job, dropped, chat, user, bumped)
        self._waiting[queued.order] = queued
        self._started().put_nowait(queued)
        return admission

    def refusal(self, user: str, chat: str = "") -> Admission | None:
        """The refusal `submit` would give `user` in `chat` now, counted as `submit` counts
        it (a token taken, the busy log), so that a request can be refused before it is
        parsed whole; None when it would be taken: nothing is counted, `submit` decides."""
        admission, _, _ = self._admission(user, chat)
        if admission is Admission.TAKEN:
            return None
        self._count(user, admission)
        return admission

    def _count(self, user: str, admission: Admission) -> None:
        """Every request takes a token, taken or not (none once stopping); a refusal is
        noted in the busy log."""
        if admission is not Admission.STOPPING:
            self.buckets.take(user)
        if admission is not Admission.TAKEN:
            self._note_refused(admission)

    def _admission(self, user: str, chat: str) -> tuple[Admission, int, Queued | None]:
        """Whether `user`'s job would be taken now, its lane (0 goes first), and the queued
        job it would push out; nothing is counted or changed here."""
        if self._stopping:
            return Admission.STOPPING, 1, None
        fresh = self.buckets.is_full(user)
        if not self.buckets.has_token(user):
            return Admission.USER_LIMITED, 1, None
        room = self.limits.queue_length + (reserved_for_fresh(self.limits) if fresh else 0)
        pushed = None
        if self.queued >= room:
            pushed = self._over_their_rate() if fresh else None
            if pushed is None:
                return Admission.QUEUE_FULL, 1, None
        ahead = fresh and not (chat and self._in_chat[chat])  # never ahead of its own chat
        return Admission.TAKEN, 0 if ahead else 1, pushed

    def _over_their_rate(self) -> Queued | None:
        """The newest waiting job of a user who has no token left now, if any."""
        for queued in reversed(self._waiting.values()):
            if not self.buckets.has_token(queued.user):
                return queued
        return None

    def _push_out(self, queued: Queued) -> None:
        """Drop a waiting job for a fresh user's: it is never started, its user is told."""
        del self._waiting[queued.order]
        self._left_queue(queued)
        queued.dropped()
        queued.bumped()
        self._note_refused(Admission.QUEUE_FULL)

    def _left_queue(self, queued: Queued) -> None:
        self._in_chat[queued.chat] -= 1
        if not self._in_chat[queued.chat]:
            del self._in_chat[queued.chat]

    def _note_refused(self, admission: Admission) -> None:
        """One log line every few seconds while work is refused, with how much, not one a
        request: a flood would otherwise write the log as fast as it arrives."""
        self.refused += 1
        now = self.clock()
        if now - self._refused_logged_at >= BUSY_LOG_EVERY_SECONDS:
            self._refused_logged_at = now
            log(
                logger,
                "chat.busy",
                logging.WARNING,
                platform=self.platform,
                refused=self.refused,
                reason=admission.value,
                queued=self.queued,
            )
            self.refused = 0

    def told_busy_lately(self, user: str) -> bool:
        """Whether `user` heard "busy" within the last minute (nothing is recorded)."""
        told = self._told_busy.get(user)
        return told is not None and self.clock() - told < BUSY_NOTICE_EVERY_SECONDS

    def busy_notice_due(self, user: str) -> bool:
        """Whether `user` should hear "busy" now (at most once a minute); counts as told."""
        now = self.clock()
        told = self._told_busy.get(user)
        if told is not None and now - told < BUSY_NOTICE_EVERY_SECONDS:
            return False
        self._told_busy[user] = now
        self._told_busy.move_to_end(user)
        while len(self._told_busy) > MAX_TRACKED_USERS:
            self._told_busy.popitem(last=False)
        return True

    def tell_busy(self, user: str, notice: Work) -> bool:
        """Send a busy notice that costs a message: when the user is due one and few are in
        flight; else it is closed unsent. True when it was started."""
        if self._stopping or len(self._notices) >= MAX_BUSY_NOTICES_AT_ONCE:
            notice.close()
            return False
        if not self.busy_notice_due(user):
            notice.close()
            return False
        task = asyncio.create_task(self._guarded(notice, "chat.busy_notice_failed"))
        self._notices.add(task)
        task.add_done_callback(self._notices.discard)
        return True

    def _started(self) -> asyncio.PriorityQueue[Queued]:
        """The queue, with its workers started on first use (inside the running loop)."""
        if self._queue is None:
            self._queue = asyncio.PriorityQueue()
            self._workers = [
                asyncio.create_task(self._work(), name=f"{self.platform}-work-{n}")
                for n in range(self.limits.workers)
            ]
        return self._queue

    async def _work(self) -> None:
        assert self._queue is not None
        me = asyncio.current_task()
        assert me is not None
        while not self._stopping:
            queued = await self._queue.get()
            if self._waiting.pop(queued.order, None) is None:  # pushed out meanwhile
                self._queue.task_done()
                continue
            self._left_queue(queued)
            self._running.add(me)
            try:
                await self._guarded(queued.job(), "chat.work_failed")
            finally:
                self._running.discard(me)
                self._queue.task_done()

    async def _guarded(self, work: Awaitable[None], event: str) -> None:
        try:
            await work
        except Exception as exc:  # the worker's edge: one answer's bug must not stop it
            fields = {"platform": self.platform, "reason": repr(exc)[:300]}
            logger.error(event, exc_info=exc, extra={"event": event, "fields": fields})

    async def idle(self, wait_seconds: float) -> bool:
        """Wait until every job taken so far has finished, for at most `wait_seconds`;
        whether they all did. The queue goes on taking work."""
        if self._queue is None:
            return True
        try:
            await asyncio.wait_for(self._queue.join(), wait_seconds)
        except TimeoutError:
            return False
        return True

    def stop_taking(self) -> int:
        """Take no more work and drop what is queued (logged, with how many); answers
        already running go on. Returns how many were dropped."""
        if self._stopping:
            return 0
        self._stopping = True
        self._stopped_at = self.clock()
        dropped = 0
        while self._queue is not None and not self._queue.empty():
            queued = self._queue.get_nowait()
            if self._waiting.pop(queued.order, None) is not None:
                self._left_queue(queued)
                queued.dropped()
                dropped += 1
            self._queue.task_done()
        for worker in self._workers:
            if worker not in self._running:
                worker.cancel()  # idle: waiting for work that will not come
        log(
            logger,
            "chat.work_dropped",
            logging.WARNING if dropped else logging.INFO,
            platform=self.platform,
            queued_answers_dropped=dropped,
            answers_running=len(self._running),
        )
        return dropped

    async def stop(self, grace_seconds: float = DEFAULT_STOP_GRACE_SECONDS) -> None:
        """`stop_taking`, then let the answers running finish until `grace_seconds` after
        work stopped being taken (at SIGTERM, or now); those still running then are
        cancelled (logged, with how many)."""
        self.stop_taking()
        busy = [*self._running, *self._notices]
        left = self._stopped_at + grace_seconds - self.clock()
        if busy and left > 0:
            await asyncio.wait(busy, timeout=left)
        late = [task for task in [*self._workers, *self._notices] if not task.done()]
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late)
            log(
                logger,
                "chat.work_cancelled",
                logging.WARNING,
                platform=self.platform,
                answers_cancelled=len(late),
                grace_seconds=grace_seconds,
            )
