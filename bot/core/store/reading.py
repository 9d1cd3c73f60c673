"""A destination's reading state: which PRs were read (by whom, when), which are snoozed and
which tags are muted (until when), and the PRs each digest run holds (`run_entries`).

A mark is one row per (destination, kind, subject); pressing again replaces it. The planner
reads the marks in its own transaction (`bot/core/delivery/reading.py`); the chat's buttons
and commands write them here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.filter_query import fold
from bot.core.models import Platform
from bot.core.reports.model import RecommendationLevel
from bot.core.select import StoredReport
from bot.core.store.db import write_transaction
from bot.core.store.reports import _stored
from bot.core.store.subscriptions import NOW
from bot.core.store.tables import (
    destinations,
    digest_runs,
    outbox,
    reading_marks,
    reports,
    run_entries,
    run_members,
    subscriptions,
)


class MarkKind(StrEnum):
    READ = "read"
    SNOOZE = "snooze"
    MUTE = "mute"


class EntryKind(StrEnum):
    NEW = "new"  # shown as new in the run
    UNREAD = "unread"  # carried over from an earlier digest, shown under "Still unread"
    MORE = "more"  # past max_items: "+N more", posted by a page


def pr_key(repo: str, number: int) -> str:
    """What a PR mark's subject is: "owner/repo#7422" (repo as the report writes it)."""
    return f"{repo}#{number}"


def item_key(item: StoredReport) -> str:
    return pr_key(item.report.repo, item.report.number)


@dataclass(frozen=True, slots=True)
class Marks:
    """The marks in force in one destination at one time."""

    read: frozenset[str] = frozenset()  # PR keys
    snoozed: frozenset[str] = frozenset()  # PR keys
    muted: frozenset[str] = frozenset()  # folded tags

    def quiet(self, item: StoredReport) -> bool:
        """Snoozed here, or carrying a tag muted here: it leaves this destination's digests."""
        return item_key(item) in self.snoozed or not self.muted.isdisjoint(item.tag_set)


async def marks_at(conn: AsyncConnection, destination_id: int, now: datetime) -> Marks:
    rows = await conn.execute(
        select(reading_marks.c.kind, reading_marks.c.subject).where(
            reading_marks.c.destination_id == destination_id,
            or_(reading_marks.c.until.is_(None), reading_marks.c.until > now),
        )
    )
    found: dict[str, set[str]] = {kind.value: set() for kind in MarkKind}
    for row in rows:
        found[str(row.kind)].add(str(row.subject))
    return Marks(
        frozenset(found[MarkKind.READ]),
        frozenset(found[MarkKind.SNOOZE]),
        frozenset(found[MarkKind.MUTE]),
    )


@dataclass(frozen=True, slots=True)
class Mark:
    kind: MarkKind
    subject: str
    actor: str
    at: datetime
    until: datetime | None = None


async def put_mark(engine: AsyncEngine, destination_id: int, mark: Mark) -> None:
    """Record `mark` in the destination, replacing an earlier one of the same subject."""
    subject = fold(mark.subject) if mark.kind is MarkKind.MUTE else mark.subject
    where = and_(
        reading_marks.c.destination_id == destination_id,
        reading_marks.c.kind == mark.kind.value,
        reading_marks.c.subject == subject,
    )
    async with write_transaction(engine) as conn:
        await conn.execute(delete(reading_marks).where(where))
        await conn.execute(
            reading_marks.insert().values(
                destination_id=destination_id,
                kind=mark.kind.value,
                subject=subject,
                actor=mark.actor,
                at=mark.at,
                until=mark.until,
            )
        )


async def reports_by_key(
    conn: AsyncConnection, pairs: Iterable[tuple[str, int]]
) -> dict[str, StoredReport]:
    """The stored reports of (repo, number) pairs, by PR key (a report gone is left out)."""
    wanted = list(dict.fromkeys(pairs))
    if not wanted:
        return {}
    rows = await conn.execute(
        select(reports.c.data, reports.c.seq, reports.c.revision).where(
            tuple_(reports.c.repo, reports.c.number).in_(wanted)
        )
    )
    found = [_stored(row) for row in rows]
    return {item_key(item): item for item in found}


@dataclass(frozen=True, slots=True)
class ShownPR:
    """A must-read PR shown in this destination: when first, under which tag."""

    repo: str
    number: int
    tag: str
    first: datetime

    @property
    def key(self) -> str:
        return pr_key(self.repo, self.number)


async def shown_must_reads(
    conn: AsyncConnection, destination_id: int, since: datetime
) -> list[ShownPR]:
    """Must-read PRs first shown here after `since`, oldest first."""
    e, r = run_entries, digest_runs
    first = func.min(r.c.created_at)
    query = (
        select(e.c.repo, e.c.number, func.min(e.c.tag).label("tag"), first.label("first"))
        .join(r, r.c.id == e.c.run_id)
        .where(
            r.c.destination_id == destination_id,
            e.c.must_read.is_(True),
            e.c.kind.in_((EntryKind.NEW.value, EntryKind.UNREAD.value)),
        )
        .group_by(e.c.repo, e.c.number)
        .having(first > since)
        .order_by(first, e.c.repo, e.c.number)
    )
    rows = await conn.execute(query)
    return [ShownPR(str(x.repo), int(x.number), str(x.tag), x.first) for x in rows]


async def previous_run_at(conn: AsyncConnection, destination_id: int, run_id: int) -> Any:
    """When the destination's last digest before run `run_id` was planned: a run that posted
    something for a scheduled subscription (a `now` post carries no unread). None: none yet."""
    scheduled = (
        select(run_members.c.run_id)
        .join(subscriptions, subscriptions.c.id == run_members.c.subscription_id)
        .where(run_members.c.run_id == digest_runs.c.id, subscriptions.c.schedule != NOW)
        .exists()
    )
    return (
        await conn.execute(
            select(func.max(digest_runs.c.created_at)).where(
                digest_runs.c.destination_id == destination_id,
                digest_runs.c.id != run_id,
                digest_runs.c.messages > 0,
                scheduled,
            )
        )
    ).scalar()


@dataclass(frozen=True, slots=True)
class EntryRow:
    position: int
    item: StoredReport
    tag: str
    kind: EntryKind
    part: int | None


async def write_entries(conn: AsyncConnection, run_id: int, rows: Sequence[EntryRow]) -> None:
    """The run's entries, in one statement."""
    if not rows:
        return
    values = [
        {
            "run_id": run_id,
            "position": row.position,
            "seq": row.item.seq,
            "repo": row.item.report.repo,
            "number": row.item.report.number,
            "tag": row.tag,
            "must_read": row.item.report.recommendation_level is RecommendationLevel.MUST_READ,
            "kind": row.kind.value,
            "part": row.part,
            "paged_at": None,
        }
        for row in rows
    ]
    await conn.execute(run_entries.insert(), values)


async def keys_in_message(
    engine: AsyncEngine, platform: Platform, target: str, external_id: str
) -> list[str]:
    """The PRs a sent digest message shows (found by the platform's message id)."""
    o, e = outbox, run_entries
    query = (
        select(e.c.repo, e.c.number)
        .join(o, and_(o.c.run_id == e.c.run_id, o.c.part == e.c.part))
        .join(destinations, destinations.c.id == o.c.destination_id)
        .where(
            destinations.c.platform == platform.value,
            destinations.c.target == target,
            o.c.external_id == external_id,
        )
        .order_by(e.c.position)
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    return list(dict.fromkeys(pr_key(str(r.repo), int(r.number)) for r in rows))


@dataclass(frozen=True, slots=True)
class Page:
    """The next entries of a run's "+N more", taken by one press."""

    run_id: int
    title: str
    at: datetime
    items: list[tuple[StoredReport, str]]  # (report, tag), in digest order
    left: int  # entries still not posted after this page


async def _run_with_more(
    conn: AsyncConnection, destination_id: int, run_id: int | None
) -> tuple[int, datetime] | None:
    e, r = run_entries, digest_runs
    query = (
        select(r.c.id, r.c.scheduled_for)
        .join(e, e.c.run_id == r.c.id)
        .where(
            r.c.destination_id == destination_id,
            e.c.kind == EntryKind.MORE.value,
            e.c.paged_at.is_(None),
        )
        .order_by(r.c.id.desc())
        .limit(1)
    )
    if run_id is not None:
        query = query.where(r.c.id == run_id)
    row = (await conn.execute(query)).first()
    return None if row is None else (int(row.id), row.scheduled_for)


async def _run_title(conn: AsyncConnection, run_id: int) -> str:
    rows = await conn.execute(
        select(subscriptions.c.name)
        .join(run_members, run_members.c.subscription_id == subscriptions.c.id)
        .where(run_members.c.run_id == run_id)
        .order_by(subscriptions.c.number)
    )
    return " · ".join(str(name) for name in rows.scalars())


async def take_page(
    engine: AsyncEngine, destination_id: int, run_id: int | None, size: int, now: datetime
) -> Page | None:
    """Take the next `size` not-yet-posted "+N more" entries of the run (None: the
    destination's latest run that has some); None when there is nothing more."""
    e = run_entries
    async with write_transaction(engine) as conn:
        found = await _run_with_more(conn, destination_id, run_id)
        if found is None:
            return None
        run, at = found
        left = and_(e.c.run_id == run, e.c.kind == EntryKind.MORE.value, e.c.paged_at.is_(None))
        rows = (
            await conn.execute(
                select(e.c.position, e.c.repo, e.c.number, e.c.tag)
                .where(left)
                .order_by(e.c.position)
                .limit(size)
            )
        ).all()
        positions = [int(row.position) for row in rows]
        await conn.execute(update(e).where(left, e.c.position.in_(positions)).values(paged_at=now))
        count = select(func.count()).select_from(e).where(left)
        remaining = (await conn.execute(count)).scalar() or 0
        stored = await reports_by_key(conn, [(str(r.repo), int(r.number)) for r in rows])
        title = await _run_title(conn, run)
    items = [
        (stored[key], str(row.tag))
        for row in rows
        if (key := pr_key(str(row.repo), int(row.number))) in stored
    ]
    return Page(run, title, at, items, int(remaining))
