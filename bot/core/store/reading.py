"""A destination's reading state: which PRs were read (by whom, when), which are snoozed and
which tags are muted (until when), and the PRs each digest run holds (its edition's entries,
`bot/core/store/editions.py`).

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

from sqlalchemy import and_, delete, func, literal, or_, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.digest.filter_query import fold
from bot.core.digest.select import StoredReport
from bot.core.models import Platform
from bot.core.store.reports import _stored
from bot.core.store.sql.bulk import among
from bot.core.store.sql.db import write_transaction
from bot.core.store.sql.tables import (
    destinations,
    digest_runs,
    edition_entries,
    editions,
    outbox,
    reading_marks,
    reports,
    run_members,
    subscriptions,
)
from bot.core.store.subscriptions import NOW
from bot.core.store.subscriptions.filters import filter_from_json


class MarkKind(StrEnum):
    READ = "read"
    SNOOZE = "snooze"
    MUTE = "mute"


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
    return (await marks_in(conn, [destination_id], now)).get(destination_id, Marks())


async def marks_in(
    conn: AsyncConnection, destination_ids: Sequence[int], now: datetime
) -> dict[int, Marks]:
    """The marks in force at `now` in each destination that has any."""
    m = reading_marks
    rows = await conn.execute(
        select(m.c.destination_id, m.c.kind, m.c.subject).where(
            among(m.c.destination_id, destination_ids),
            or_(m.c.until.is_(None), m.c.until > now),
        )
    )
    found: dict[int, dict[str, set[str]]] = {}
    for row in rows:
        kinds = found.setdefault(int(row.destination_id), {kind.value: set() for kind in MarkKind})
        kinds[str(row.kind)].add(str(row.subject))
    return {
        dest: Marks(
            frozenset(kinds[MarkKind.READ]),
            frozenset(kinds[MarkKind.SNOOZE]),
            frozenset(kinds[MarkKind.MUTE]),
        )
        for dest, kinds in found.items()
    }


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
    found = await shown_must_reads_in(conn, await with_digests(conn, [destination_id]), since)
    return found.get(destination_id, [])


async def with_digests(conn: AsyncConnection, destination_ids: Sequence[int]) -> list[int]:
    """The destinations with a digest stored (an edition): one index probe each. On a first
    tick none has, and a join would read runs the tick itself is writing, unknown to the
    statistics."""
    r = digest_runs
    any_digest = (
        select(literal(1))
        .where(r.c.destination_id == destinations.c.id, r.c.edition_id.is_not(None))
        .limit(1)
        .scalar_subquery()
    )
    asked = await conn.execute(
        select(destinations.c.id).where(
            among(destinations.c.id, destination_ids), any_digest.is_not(None)
        )
    )
    return [int(dest) for dest in asked.scalars()]


async def shown_must_reads_in(
    conn: AsyncConnection, destination_ids: Sequence[int], since: datetime
) -> dict[int, list[ShownPR]]:
    """Each destination's must-read PRs first shown there after `since`, oldest first (grouped
    in the database: a destination may hold 30 days of runs, each showing several); pass the
    destinations `with_digests` found (the others have none)."""
    if not destination_ids:
        return {}
    e, r = edition_entries, digest_runs
    first = func.min(r.c.created_at)
    query = (
        select(r.c.destination_id, e.c.repo, e.c.number, func.min(e.c.tag).label("tag"), first)
        .join(r, r.c.edition_id == e.c.edition_id)
        .where(among(r.c.destination_id, destination_ids), e.c.must_read.is_(True))
        .group_by(r.c.destination_id, e.c.repo, e.c.number)
        .having(first > since)
        .order_by(first, e.c.repo, e.c.number)
    )
    found: dict[int, list[ShownPR]] = {}
    for x in await conn.execute(query):
        shown = ShownPR(str(x.repo), int(x.number), str(x.tag), x[4])
        found.setdefault(int(x.destination_id), []).append(shown)
    return found


async def previous_runs_at(conn: AsyncConnection, destination_ids: Sequence[int]) -> dict[int, Any]:
    """When each destination's last digest was planned: a run that posted something for a
    scheduled subscription (a `now` post carries no unread); a destination with none is left
    out. Asked per destination (its runs by index), never as a join over every run: the tick
    that asks grows these tables faster than the statistics the planner would need follow."""
    r, m, s = digest_runs, run_members, subscriptions
    scheduled = (
        select(literal(1))
        .select_from(m.join(s, s.c.id == m.c.subscription_id))
        .where(m.c.run_id == r.c.id, s.c.schedule != NOW)
        .limit(1)
        .scalar_subquery()
    )
    last = (
        select(func.max(r.c.created_at))
        .where(r.c.destination_id == destinations.c.id, r.c.messages > 0, scheduled.is_not(None))
        .scalar_subquery()
    )
    rows = await conn.execute(
        select(destinations.c.id, last).where(among(destinations.c.id, destination_ids))
    )
    return {int(dest): at for dest, at in rows if at is not None}


async def keys_in_message(
    engine: AsyncEngine, platform: Platform, target: str, external_id: str
) -> list[str]:
    """The PRs a sent digest message shows (found by the platform's message id)."""
    o, e, r = outbox, edition_entries, digest_runs
    query = (
        select(e.c.repo, e.c.number)
        .join(r, r.c.edition_id == e.c.edition_id)
        .join(o, and_(o.c.run_id == r.c.id, o.c.part == e.c.part))
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

    key: int  # what its own "+N more" button carries: the run's edition
    title: str
    at: datetime
    items: list[tuple[StoredReport, str]]  # (report, tag), in digest order
    left: int  # entries still not posted after this page


DEFAULT_PAGE = 30  # a "+N more" page of a run whose subscriptions are all gone
PAGE_TRIES = 8  # runs a press may find emptied by other presses before it gives up


def _more_of(edition: Any) -> Any:
    counted = select(editions.c.more_count).where(editions.c.id == edition)
    return counted.scalar_subquery()


@dataclass(frozen=True, slots=True)
class _PagedRun:
    id: int
    at: datetime
    edition: int
    paged: int  # "+N more" entries its pages posted, read under the run's row lock
    more: int  # "+N more" entries in all


async def _run_with_more(conn: AsyncConnection, destination_id: int, key: int | None) -> Any:
    """The destination's latest run (of edition `key`) with "+N more" entries not posted yet:
    its id, time, edition and "+N more" entries in all."""
    r = digest_runs
    more = _more_of(r.c.edition_id)
    query = (
        select(r.c.id, r.c.scheduled_for, r.c.edition_id, more.label("more"))
        .where(r.c.destination_id == destination_id, r.c.edition_id.is_not(None), more > r.c.paged)
        .order_by(r.c.id.desc())
        .limit(1)
    )
    if key is not None:
        query = query.where(r.c.edition_id == key)
    return (await conn.execute(query)).first()


async def _claim_run(
    conn: AsyncConnection, destination_id: int, key: int | None
) -> _PagedRun | None:
    """The run a press pages, its row locked until the transaction ends (FOR UPDATE on
    PostgreSQL; SQLite's writers take turns already): presses that come together take its
    pages one after another, each reading the `paged` the one before it wrote. A run that the
    presses before emptied is passed over for the next one with entries left."""
    for _ in range(PAGE_TRIES):
        run = await _run_with_more(conn, destination_id, key)
        if run is None:
            return None
        locked = select(digest_runs.c.paged).where(digest_runs.c.id == run.id).with_for_update()
        paged = int((await conn.execute(locked)).scalar_one())
        if paged < int(run.more):
            return _PagedRun(
                int(run.id), run.scheduled_for, int(run.edition_id), paged, int(run.more)
            )
    return None


async def _run_shape(conn: AsyncConnection, run_id: int) -> tuple[str, int]:
    """What a page of the run takes from the subscriptions it served: the destination's
    title (its first that has one; "" lets the page name its repo, never the subscriptions'
    names), and the size of a page: their `max_items`, the digest's own budget."""
    rows = (
        await conn.execute(
            select(subscriptions.c.title, subscriptions.c.filters)
            .join(run_members, run_members.c.subscription_id == subscriptions.c.id)
            .where(run_members.c.run_id == run_id)
            .order_by(subscriptions.c.number)
        )
    ).all()
    titles = [str(row.title) for row in rows if row.title]
    sizes = [filter_from_json(row.filters).max_items for row in rows]
    return (titles[0] if titles else ""), max(sizes, default=DEFAULT_PAGE)


async def take_page(
    engine: AsyncEngine, destination_id: int, key: int | None, now: datetime
) -> Page | None:
    """Take the next page of not-yet-posted "+N more" entries of the destination's run of
    edition `key` (None: its latest run that has some), as many as its digest showed at
    most; None when there is nothing more."""
    async with write_transaction(engine) as conn:
        run = await _claim_run(conn, destination_id, key)
        if run is None:
            return None
        title, size = await _run_shape(conn, run.id)
        listed = select(editions.c.more).where(editions.c.id == run.edition)
        behind = (await conn.execute(listed)).scalar() or []
        page = behind[run.paged : run.paged + size]
        rows = [(str(repo), int(number), str(tag)) for _, repo, number, tag, _ in page]
        await conn.execute(
            update(digest_runs)
            .where(digest_runs.c.id == run.id)
            .values(paged=run.paged + len(rows))
        )
        stored = await reports_by_key(conn, [(repo, number) for repo, number, _ in rows])
    keyed = [(pr_key(repo, number), tag) for repo, number, tag in rows]
    items = [(stored[pr], tag) for pr, tag in keyed if pr in stored]
    left = run.more - run.paged - len(rows)
    return Page(run.edition, title, run.at, items, left)
