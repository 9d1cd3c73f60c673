"""The run rows of a batch of destinations: who takes part, and writing what was planned.

The planner (`bot/core/delivery/outbox.py`) plans up to PLAN_BATCH destinations in one
transaction. Here, with a few statements for the whole batch: the destinations are locked
(PostgreSQL: replicas plan a destination one at a time; SQLite's write transaction already
is), the fires some replica already planned are left out (a run is unique on (destination,
time), a member on (subscription, its fire time): the check runs under the lock and the unique
keys stay as the backstop), each subscription's coverage is read, and in the end the runs,
their members, their outbox rows, the `now` posts and the watermarks are written.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from sqlalchemy import Column, bindparam, func, literal, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.core.delivery.queue import Queued
from bot.core.digest.select import Digest, StoredReport
from bot.core.models import Format, Platform
from bot.core.record import record
from bot.core.store.editions import queue_editions
from bot.core.store.reports import seq_before
from bot.core.store.sql.bulk import among, insert_columns, insert_ignore_many, lock_rows
from bot.core.store.sql.tables import (
    destinations,
    digest_runs,
    instant_posts,
    run_members,
    subscriptions,
)
from bot.core.store.statuses import RunStatus
from bot.core.store.subscriptions import Subscription

PLATFORM_FORMAT = {
    Platform.SLACK: Format.SLACK,
    Platform.TELEGRAM: Format.TELEGRAM,
    Platform.LARK: Format.LARK,
    Platform.CONSOLE: Format.TEXT,
}


@record
class PlannedRun:
    run_id: int | None
    created: bool
    status: RunStatus | None = None
    entries: int = 0
    messages: int = 0


NOT_PLANNED = PlannedRun(run_id=None, created=False)


@record
class Due:
    """A subscription whose fire time has come (for `now`: the tick's time)."""

    subscription: Subscription
    fire: datetime
    synthesis: bool = False  # its cadence is longer than a day: the weekly synthesis on top
    since: datetime | None = None  # its first digest: only reports stored since (one window)
    period_from: datetime | None = None  # a weekly's previous fire: its header shows the week


@dataclass(slots=True)
class Part:
    """A subscription's part in a run being planned."""

    sub: Subscription
    fire: datetime
    start: int  # its watermark, or past its runs still being delivered
    picked: list[StoredReport] = field(default_factory=list)
    synthesis: bool = False  # a cadence over a day: the weekly synthesis
    since: datetime | None = None  # a first digest's window: the reports stored since
    period_from: datetime | None = None  # a weekly's previous fire (the header's period)


@dataclass(slots=True)
class Run:
    """One destination's run being planned in a batch."""

    destination_id: int
    due: Sequence[Due]
    parts: list[Part] = field(default_factory=list)
    seqs: tuple[int, int] = (0, 0)  # the window it read: (lowest start, newest seq)
    marked: bool = False  # the destination has reading marks in force (snoozes, mutes, reads)
    window: int = 0  # which window its picks came from (the tick counts them)
    digest: Digest | None = None
    instant: list[int] = field(default_factory=list)  # the seqs its `now` subscriptions post
    edition: int | None = None
    messages: Sequence[Queued] = ()  # placement only (the payloads are the edition's)
    result: PlannedRun = NOT_PLANNED
    fire: datetime = field(init=False)  # the run's time: its latest due fire

    def __post_init__(self) -> None:
        due = self.due
        self.fire = due[0].fire if len(due) == 1 else max(item.fire for item in due)

    @property
    def status(self) -> RunStatus:
        """Pending while it has messages to send; a run with none is finished (empty) at once."""
        return _PENDING if self.messages else _EMPTY

    @property
    def entries(self) -> int:
        return self.digest.total if self.digest is not None else 0

    @property
    def day(self) -> date:
        """The date the digest is rendered for: its latest member's fire."""
        return max(part.fire for part in self.parts).date()

    @property
    def lead(self) -> Subscription:
        """Its first member: the run speaks its language, in its layout and verbosity."""
        return self.parts[0].sub

    @property
    def label(self) -> str:
        return f"{self.due[0].subscription.platform.value}:{self.due[0].subscription.target}"


async def covered_seqs(conn: AsyncConnection, subscription_ids: Sequence[int]) -> dict[int, int]:
    """The last report seq each subscription's digests cover: its watermark, or past its runs
    still being delivered (their entries are queued already)."""
    ids = list(subscription_ids)
    m, r, s = run_members, digest_runs, subscriptions
    pending = (  # per subscription, by index: the tick grows these tables past their statistics
        select(func.max(m.c.to_seq))
        .join(r, r.c.id == m.c.run_id)
        .where(m.c.subscription_id == s.c.id, r.c.status == RunStatus.PENDING.value)
        .scalar_subquery()
    )
    rows = await conn.execute(select(s.c.id, s.c.watermark, pending).where(among(s.c.id, ids)))
    covered = {int(sub): max(int(mark or 0), int(seq or 0)) for sub, mark, seq in rows}
    return {sub: covered.get(sub, 0) for sub in ids}


async def covered_seq(conn: AsyncConnection, subscription_id: int) -> int:
    return (await covered_seqs(conn, [subscription_id]))[subscription_id]


async def take_parts(
    conn: AsyncConnection, runs: Sequence[Run], floors: dict[datetime, int] | None = None
) -> None:
    """Lock the batch's destinations, then give each run the parts no run has taken yet (a
    destination already planned for its time gets none). `floors`: where a first digest's
    window starts, by its `since`, read once for the batches of a tick (every first digest of a
    schedule has the same `since`; reading it is a scan of the reports' times)."""
    floors = {} if floors is None else floors
    ids = sorted({run.destination_id for run in runs})
    await lock_rows(conn, destinations.c.id, ids)
    fires = {item.fire for run in runs for item in run.due} | {run.fire for run in runs}
    taken_runs = await _already(conn, digest_runs.c.destination_id, destinations.c.id, ids, fires)
    sub_ids = [item.subscription.id for run in runs for item in run.due]
    taken = await _already(conn, run_members.c.subscription_id, subscriptions.c.id, sub_ids, fires)
    starts = await covered_seqs(conn, sub_ids)
    for since in _first_windows(runs) - floors.keys():
        floors[since] = await seq_before(conn, since)
    for run in runs:
        if (run.destination_id, run.fire) in taken_runs:
            continue
        run.parts = [
            Part(
                item.subscription,
                item.fire,
                starts[item.subscription.id],
                [],
                item.synthesis,
                item.since,
                item.period_from,
            )
            for item in run.due
            if (item.subscription.id, item.fire) not in taken
        ]
        for part in run.parts:  # a first digest covers one window, not the whole store
            if part.since is not None:
                part.start = max(part.start, floors[part.since])


def _first_windows(runs: Sequence[Run]) -> set[datetime]:
    return {item.since for run in runs for item in run.due if item.since is not None}


async def _already(
    conn: AsyncConnection,
    owner: Column[int],
    key: Column[int],
    ids: Sequence[int],
    fires: Iterable[datetime],
) -> set[tuple[int, datetime]]:
    """The (id, fire) pairs that have a row in `owner`'s table (a run, a member) already. Asked
    per id, by the unique index on (owner, time), one statement per fire (a tick has one or
    a few): never a scan, which is what the planner picks from statistics taken before the
    tick grew the table."""
    table = owner.table
    found: set[tuple[int, datetime]] = set()
    for fire in fires:
        probe = (
            select(literal(1))
            .where(owner == key, table.c.scheduled_for == fire)
            .limit(1)
            .scalar_subquery()
        )
        rows = await conn.execute(select(key).where(among(key, ids), probe.is_not(None)))
        found.update((int(row), fire) for (row,) in rows)
    return found


async def advance_watermarks(conn: AsyncConnection, moves: Iterable[tuple[int, int]]) -> None:
    """Move each (subscription, seq)'s watermark forward to seq (never back)."""
    rows = [{"sub": sub, "seq": seq} for sub, seq in moves]
    if rows:
        statement = (
            update(subscriptions)
            .where(
                subscriptions.c.id == bindparam("sub"), subscriptions.c.watermark < bindparam("seq")
            )
            .values(watermark=bindparam("seq"))
        )
        await conn.execute(statement, rows)


async def write_runs(conn: AsyncConnection, runs: Sequence[Run], now: datetime) -> None:
    """The planned runs with their members, outbox rows and `now` posts; a run with nothing
    to send is finished at once and its members' watermarks move past what it read."""
    if not runs:
        return
    before = (await conn.execute(select(func.max(digest_runs.c.id)))).scalar() or 0
    await insert_columns(conn, digest_runs, _run_columns(runs, now))
    # Read back, not RETURNING (which SQLite runs a row at a time to keep the order): no one
    # else plans these destinations while the batch holds them, and each has one new run. By
    # id alone (a range of the primary key; what other batches wrote meanwhile is left here).
    found = await conn.execute(
        select(digest_runs.c.id, digest_runs.c.destination_id).where(digest_runs.c.id > before)
    )
    mine = {run.destination_id for run in runs}
    ids = {int(dest): int(run_id) for run_id, dest in found if dest in mine}
    for run in runs:
        run_id = ids[run.destination_id]
        run.result = PlannedRun(run_id, True, run.status, run.entries, len(run.messages))
    parts = [(run, part) for run in runs for part in run.parts]
    members: dict[str, list[Any]] = {
        "run_id": [run.result.run_id for run, _ in parts],
        "subscription_id": [part.sub.id for _, part in parts],
        "scheduled_for": [part.fire for _, part in parts],
        "from_seq": [part.start for _, part in parts],
        "to_seq": [run.seqs[1] for run, _ in parts],
    }
    await insert_columns(conn, run_members, members)
    sending = [run.result.run_id for run in runs if run.messages]
    await queue_editions(conn, [i for i in sending if i is not None], now)
    posts = [
        {
            "destination_id": run.destination_id,
            "seq": seq,
            "run_id": run.result.run_id,
            "posted_at": now,
        }
        for run in runs
        for seq in run.instant
    ]
    await insert_ignore_many(conn, instant_posts, posts)
    done = [(part.sub.id, run.seqs[1]) for run in runs if not run.messages for part in run.parts]
    await advance_watermarks(conn, done)


_PENDING, _EMPTY = RunStatus.PENDING, RunStatus.EMPTY  # (an enum member's lookup is slow)


def _run_columns(runs: Sequence[Run], now: datetime) -> dict[str, list[Any]]:
    statuses = [run.status for run in runs]
    return {
        "destination_id": [run.destination_id for run in runs],
        "scheduled_for": [run.fire for run in runs],
        "created_at": [now] * len(runs),
        "from_seq": [run.seqs[0] for run in runs],
        "to_seq": [run.seqs[1] for run in runs],
        "entries": [run.entries for run in runs],
        "messages": [len(run.messages) for run in runs],
        "status": [str(status) for status in statuses],  # (a StrEnum: its value)
        "finished_at": [None if status is _PENDING else now for status in statuses],
        "edition_id": [run.edition for run in runs],
        "paged": [0] * len(runs),
    }
