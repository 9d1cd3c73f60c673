"""The bounded chat work queue: what it takes, what it refuses, and what a shutdown drops."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import pytest

from bot.adapters.buckets import TokenBuckets
from bot.adapters.work import (
    BUSY_NOTICE_EVERY_SECONDS,
    MAX_BUSY_NOTICES_AT_ONCE,
    Admission,
    WorkLimits,
    WorkQueue,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Blocked:
    """Jobs that wait for `release`; what started, what finished, what was dropped."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started: list[int] = []
        self.finished: list[int] = []
        self.dropped: list[int] = []

    def job(self, number: int) -> tuple[Callable[[], Awaitable[None]], Callable[[], None]]:
        async def run() -> None:
            self.started.append(number)
            await self.release.wait()
            self.finished.append(number)

        return run, lambda: self.dropped.append(number)


def submit(work: WorkQueue, blocked: Blocked, user: str, number: int) -> Admission:
    run, drop = blocked.job(number)
    return work.submit(user, run, drop)


async def until(condition: Callable[[], bool], limit: int = 1000) -> None:
    for _ in range(limit):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never became true")


def test_a_user_gets_the_burst_then_one_token_per_refill() -> None:
    clock = Clock()
    buckets = TokenBuckets(burst=3, per_minute=6, clock=clock)
    assert [buckets.take("u") for _ in range(4)] == [True, True, True, False]
    assert buckets.take("v"), "another user has a bucket of their own"
    clock.now += 9.9
    assert not buckets.take("u")
    clock.now += 0.1  # 6 a minute: one token every 10 s
    assert buckets.take("u")
    assert not buckets.take("u")


def test_the_buckets_remember_a_bounded_number_of_users() -> None:
    buckets = TokenBuckets(burst=1, per_minute=1, clock=Clock(), max_users=100)
    for n in range(1000):
        buckets.take(f"user{n}")
    assert len(buckets) == 100
    assert not buckets.take("user999"), "the ones seen last are remembered"
    assert buckets.take("user0"), "the ones seen first are forgotten: a full bucket again"


async def test_beyond_the_queue_length_work_is_refused_and_never_started() -> None:
    limits = WorkLimits(queue_length=3, workers=2, per_user_burst=100, per_user_per_minute=60)
    work = WorkQueue("test", limits, Clock())
    blocked = Blocked()
    taken = [submit(work, blocked, "u", n) for n in range(2)]
    await until(lambda: len(blocked.started) == 2)  # both workers busy
    taken += [submit(work, blocked, "u", n) for n in range(2, 7)]
    assert taken == [Admission.TAKEN] * 5 + [Admission.QUEUE_FULL] * 2
    assert blocked.dropped == [5, 6]
    blocked.release.set()
    assert await work.idle(5)
    assert sorted(blocked.finished) == [0, 1, 2, 3, 4]
    await work.stop()


async def test_a_user_over_their_rate_is_refused_while_others_are_taken() -> None:
    limits = WorkLimits(queue_length=100, workers=1, per_user_burst=2, per_user_per_minute=1)
    work = WorkQueue("test", limits, Clock())
    blocked = Blocked()
    flood = [submit(work, blocked, "flooder", n) for n in range(5)]
    newcomer = submit(work, blocked, "newcomer", 99)
    assert flood == [Admission.TAKEN] * 2 + [Admission.USER_LIMITED] * 3
    assert newcomer is Admission.TAKEN
    blocked.release.set()
    assert await work.idle(5)
    assert blocked.finished == [0, 99, 1], "a user with a full bucket goes ahead"
    await work.stop()


async def test_stopping_drops_the_queued_work_with_one_counting_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limits = WorkLimits(queue_length=10, workers=2, per_user_burst=100, per_user_per_minute=60)
    work = WorkQueue("test", limits, Clock())
    blocked = Blocked()
    for n in range(6):
        submit(work, blocked, f"u{n}", n)
    await until(lambda: len(blocked.started) == 2)
    caplog.set_level(logging.INFO, "prdigest.work")
    assert work.stop_taking() == 4
    assert blocked.dropped == [2, 3, 4, 5]
    assert submit(work, blocked, "late", 7) is Admission.STOPPING
    blocked.release.set()  # the two running finish their sends
    await work.stop(grace_seconds=5)
    assert sorted(blocked.finished) == [0, 1]
    dropped = [r for r in caplog.records if r.getMessage() == "chat.work_dropped"]
    assert len(dropped) == 1
    assert dropped[0].fields["queued_answers_dropped"] == 4  # type: ignore[attr-defined]


async def test_work_still_running_after_the_grace_is_cancelled() -> None:
    work = WorkQueue("test", WorkLimits(workers=1), Clock())
    blocked = Blocked()
    submit(work, blocked, "u", 1)
    await until(lambda: blocked.started == [1])
    await work.stop(grace_seconds=0)
    assert blocked.finished == []
    assert work.running == 0


async def test_a_failing_job_is_logged_and_the_worker_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    work = WorkQueue("test", WorkLimits(workers=1), Clock())
    done: list[str] = []

    async def broken() -> None:
        raise RuntimeError("boom")

    async def fine() -> None:
        done.append("fine")

    work.submit("u", broken)
    work.submit("u", fine)
    assert await work.idle(5)
    assert done == ["fine"]
    assert any(r.getMessage() == "chat.work_failed" for r in caplog.records)
    await work.stop()


async def test_a_user_hears_busy_once_a_minute_and_few_notices_fly_at_once() -> None:
    clock = Clock()
    work = WorkQueue("test", WorkLimits(), clock)
    assert work.busy_notice_due("u")
    assert not work.busy_notice_due("u")
    clock.now += BUSY_NOTICE_EVERY_SECONDS
    assert work.busy_notice_due("u")

    release = asyncio.Event()
    sent: list[str] = []

    async def notice(user: str) -> None:
        await release.wait()
        sent.append(user)

    users = [f"n{n}" for n in range(MAX_BUSY_NOTICES_AT_ONCE + 2)]
    started = [work.tell_busy(user, notice(user)) for user in users]
    assert started == [True] * MAX_BUSY_NOTICES_AT_ONCE + [False] * 2
    release.set()
    await work.stop()
    assert sorted(sent) == sorted(users[:MAX_BUSY_NOTICES_AT_ONCE])


async def test_a_user_with_a_full_bucket_goes_ahead_and_has_room_past_the_queue() -> None:
    limits = WorkLimits(queue_length=4, workers=1, per_user_burst=4, per_user_per_minute=0.001)
    work = WorkQueue("test", limits, Clock())
    blocked = Blocked()
    submit(work, blocked, "someone", 0)
    await until(lambda: blocked.started == [0])  # the one worker is busy
    heavy = [submit(work, blocked, "heavy", n) for n in range(1, 6)]
    newcomer = submit(work, blocked, "newcomer", 9)
    assert heavy == [Admission.TAKEN] * 4 + [Admission.USER_LIMITED]
    assert newcomer is Admission.TAKEN, "one place past the queue is kept for a fresh user"
    assert submit(work, blocked, "another", 10) is Admission.TAKEN, "in the place of heavy's 4"
    assert blocked.dropped == [5, 4]
    blocked.release.set()
    assert await work.idle(5)
    assert blocked.finished == [0, 1, 9, 10, 2, 3], "fresh first, then in the order taken"
    await work.stop()


async def test_a_fresh_user_never_goes_ahead_of_work_queued_in_the_same_chat() -> None:
    limits = WorkLimits(queue_length=8, workers=1, per_user_burst=4, per_user_per_minute=0.001)
    work = WorkQueue("test", limits, Clock())
    blocked = Blocked()
    for user, number, chat in [("someone", 0, "A"), ("heavy", 1, "G"), ("heavy", 2, "G")]:
        run, drop = blocked.job(number)
        work.submit(user, run, drop, chat)
        await until(lambda: 0 in blocked.started)  # the one worker is busy with 0
    for user, number, chat in [("owner", 3, "G"), ("elsewhere", 4, "B")]:
        run, drop = blocked.job(number)
        assert work.submit(user, run, drop, chat) is Admission.TAKEN

    blocked.release.set()
    assert await work.idle(5)

    # 1 and 4 came fresh to a chat with nothing queued: ahead, in the order taken. 3 is fresh
    # too, but chat G's 2 came first: a chat's answers keep the order its commands came in.
    assert blocked.finished == [0, 1, 4, 2, 3]
    await work.stop()


async def test_a_refusal_asked_before_submitting_counts_as_submit_would() -> None:
    clock = Clock()
    work = WorkQueue("t", WorkLimits(queue_length=4, workers=1, per_user_burst=2,
                                     per_user_per_minute=1), clock)  # fmt: skip
    blocked = Blocked()
    assert work.refusal("u") is None, "it would be taken"
    assert work.refusal("u") is None, "asking takes nothing"
    assert submit(work, blocked, "u", 1) is Admission.TAKEN
    assert submit(work, blocked, "u", 2) is Admission.TAKEN
    assert work.refusal("u") is Admission.USER_LIMITED
    clock.now += 60  # one token back
    assert work.refusal("v") is None
    assert submit(work, blocked, "u", 3) is Admission.TAKEN, "the refusal took no token back"
    work.stop_taking()
    assert work.refusal("v") is Admission.STOPPING
    await work.stop(0)


async def test_a_refusal_takes_the_token_of_the_request_it_refuses() -> None:
    work = WorkQueue("t", WorkLimits(queue_length=1, workers=1, per_user_burst=3,
                                     per_user_per_minute=1), Clock())  # fmt: skip
    blocked = Blocked()
    assert submit(work, blocked, "a", 1) is Admission.TAKEN
    await until(lambda: blocked.started == [1])
    assert submit(work, blocked, "b", 2) is Admission.TAKEN, "the queue is full now"
    work.buckets.take("u")  # not fresh: no reserved place
    assert work.refusal("u") is Admission.QUEUE_FULL
    assert work.refusal("u") is Admission.QUEUE_FULL
    assert not work.buckets.has_token("u"), "every request counts, refused or not"
    blocked.release.set()
    await work.stop(1)


def test_told_busy_lately_asks_without_telling() -> None:
    clock = Clock()
    work = WorkQueue("t", clock=clock)
    assert not work.told_busy_lately("u")
    assert work.busy_notice_due("u")
    assert work.told_busy_lately("u") and not work.busy_notice_due("u")
    clock.now += BUSY_NOTICE_EVERY_SECONDS
    assert not work.told_busy_lately("u")


async def test_a_fresh_user_pushes_out_the_newest_job_of_a_user_over_their_rate() -> None:
    work = WorkQueue("t", WorkLimits(queue_length=4, workers=1, per_user_burst=2,
                                     per_user_per_minute=1), Clock())  # fmt: skip
    blocked = Blocked()
    bumped: list[int] = []

    def send(user: str, number: int) -> Admission:
        run, drop = blocked.job(number)
        return work.submit(user, run, drop, bumped=lambda: bumped.append(number))

    assert send("a", 1) is Admission.TAKEN
    await until(lambda: blocked.started == [1])  # the one worker is busy from now on
    assert [send("heavy", n) for n in (2, 3)] == [Admission.TAKEN] * 2  # no token left now
    assert [send(user, n) for user, n in (("b", 4), ("c", 5), ("d", 6))] == [Admission.TAKEN] * 3
    assert work.queued == 5, "full, the place kept for fresh users taken too"

    assert send("newcomer", 7) is Admission.TAKEN
    assert bumped == [3] and blocked.dropped == [3], "the heavy user's newest job made room"
    assert send("another", 8) is Admission.TAKEN
    assert bumped == [3, 2]
    assert send("third", 9) is Admission.QUEUE_FULL, "everyone queued has tokens left"
    assert bumped == [3, 2] and blocked.dropped == [3, 2, 9]
    assert work.queued == 5

    blocked.release.set()
    assert await work.idle(10)
    assert blocked.finished == [1, 4, 5, 6, 7, 8], "a job pushed out never runs"
    await work.stop(1)
