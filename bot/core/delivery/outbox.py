"""Digest runs: planned once per (destination, fire time), their messages queued.

A destination holds any number of subscriptions. The scheduler hands over, per destination and
tick, the subscriptions that are due; they are planned as one run, so a PR that several of them
match appears once, its entry saying which (`matched: breaking, rollout`). Each subscription's
part is a `run_members` row unique on (subscription, its fire time): every replica may fire the
same cron, one insert wins. The winner selects what is new since each subscription's
watermark, renders it and writes one outbox row per message, all in the same transaction
(which holds the destination's row on PostgreSQL, so replicas plan a destination one at a
time). Senders claim rows in order per destination, and each result is committed at once
(`bot/core/delivery/ledger.py`). A subscription's watermark advances only when every message of
its run has reached a final state, so a restart resumes the rendered rows and never recomputes.

A `now` subscription is due at every tick and takes part only when something new matches; the
PRs it posts are remembered (`instant_posts`), and a later digest in the same destination
refers to that post ("posted 14:02") instead of repeating it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.delivery.ledger import RunStatus, advance_members, advance_watermark
from bot.core.delivery.queue import Queued, lay_out, layout_for, prepare_topics, queue
from bot.core.delivery.reading import DEFAULT_READING, ReadingPolicy, record_entries, with_unread
from bot.core.models import Format, Layout, Platform, Verbosity
from bot.core.render.options import DigestOptions
from bot.core.render.renderer import Renderer
from bot.core.select import (
    Digest,
    DigestFilter,
    StoredReport,
    build_digest,
    default_title,
    select_new,
)
from bot.core.store.db import insert_ignore, write_transaction
from bot.core.store.reading import marks_at
from bot.core.store.reports import WINDOW_LIMIT, WindowCache, count_after, reports_after
from bot.core.store.subscriptions import Subscription
from bot.core.store.tables import (
    destinations,
    digest_runs,
    instant_posts,
    run_members,
    subscriptions,
)
from bot.logs import log

logger = logging.getLogger("prdigest.outbox")
PLATFORM_FORMAT = {
    Platform.SLACK: Format.SLACK,
    Platform.TELEGRAM: Format.TELEGRAM,
    Platform.CONSOLE: Format.TEXT,
}
POSTED_FORMAT = "%H:%M"  # "posted 14:02", in the subscription's zone


@dataclass(frozen=True, slots=True)
class PlannedRun:
    run_id: int | None
    created: bool
    status: RunStatus | None = None
    entries: int = 0
    messages: int = 0


@dataclass(frozen=True, slots=True)
class Due:
    """A subscription whose fire time has come (for `now`: the tick's time)."""

    subscription: Subscription
    fire: datetime
    synthesis: bool = False  # its cadence is longer than a day: the weekly synthesis on top


@dataclass(slots=True)
class _Part:
    """A subscription's part in a run being planned."""

    sub: Subscription
    fire: datetime
    start: int  # its watermark, or past its runs still being delivered
    picked: list[StoredReport] = field(default_factory=list)
    synthesis: bool = False  # a cadence over a day: the weekly synthesis


async def _new_run(
    conn: AsyncConnection, destination_id: int, at: datetime, now: datetime
) -> int | None:
    """The run row for (destination, at), unless one exists; its id or None."""
    values = {
        "destination_id": destination_id,
        "scheduled_for": at,
        "created_at": now,
        "from_seq": 0,
        "to_seq": 0,
        "entries": 0,
        "messages": 0,
        "status": RunStatus.PENDING.value,
    }
    inserted = await insert_ignore(conn, digest_runs, values, digest_runs.c.id)
    return None if inserted is None else int(inserted)


async def covered_seq(conn: AsyncConnection, subscription_id: int) -> int:
    """The last report seq the subscription's digests cover: its watermark, or past its runs
    still being delivered (their entries are queued already)."""
    watermark = (
        await conn.execute(
            select(subscriptions.c.watermark).where(subscriptions.c.id == subscription_id)
        )
    ).scalar()
    pending = (
        await conn.execute(
            select(func.max(run_members.c.to_seq))
            .join(digest_runs, digest_runs.c.id == run_members.c.run_id)
            .where(
                run_members.c.subscription_id == subscription_id,
                digest_runs.c.status == RunStatus.PENDING.value,
            )
        )
    ).scalar()
    return max(int(watermark or 0), int(pending or 0))


async def _claim_parts(conn: AsyncConnection, run_id: int, due: Sequence[Due]) -> list[_Part]:
    """A member row per due subscription that no other run has taken for its fire time."""
    parts = []
    for item in due:
        values = {
            "run_id": run_id,
            "subscription_id": item.subscription.id,
            "scheduled_for": item.fire,
            "from_seq": 0,
            "to_seq": 0,
        }
        if await insert_ignore(conn, run_members, values, run_members.c.run_id) is not None:
            parts.append(
                _Part(
                    item.subscription,
                    item.fire,
                    await covered_seq(conn, item.subscription.id),
                    synthesis=item.synthesis,
                )
            )
    return parts


async def _read_window(
    conn: AsyncConnection, label: str, start: int, windows: WindowCache | None
) -> list[StoredReport]:
    """The reports after `start`, at most WINDOW_LIMIT of them (a cap is logged)."""
    if windows is None:
        window = await reports_after(conn, start, WINDOW_LIMIT)
    else:
        window = await windows.after(conn, start)
    if len(window) == WINDOW_LIMIT:
        skipped = await count_after(conn, start) - WINDOW_LIMIT
        log(logger, "digest.window_capped", logging.WARNING, destination=label, skipped=skipped)
    return window


async def _lock_destination(conn: AsyncConnection, destination_id: int) -> None:
    """Replicas plan a destination one at a time (SQLite's write transaction already is)."""
    if conn.dialect.name == "postgresql":
        await conn.execute(
            select(destinations.c.id).where(destinations.c.id == destination_id).with_for_update()
        )


async def _drop_quiet_instants(
    conn: AsyncConnection, run_id: int, parts: list[_Part], end: int
) -> list[_Part]:
    """A `now` subscription with nothing new leaves the run; what it read is behind it."""
    kept = []
    for part in parts:
        if part.sub.instant and not part.picked:
            await conn.execute(
                delete(run_members).where(
                    run_members.c.run_id == run_id,
                    run_members.c.subscription_id == part.sub.id,
                )
            )
            if part.start == part.sub.watermark:  # nothing of it is still being delivered
                await advance_watermark(conn, part.sub.id, end)
            continue
        kept.append(part)
    return kept


async def _posted_before(
    conn: AsyncConnection, destination_id: int, seqs: list[int], tz: str
) -> dict[int, str]:
    """The PRs among `seqs` that a `now` subscription already posted here, with the time."""
    if not seqs:
        return {}
    rows = await conn.execute(
        select(instant_posts.c.seq, instant_posts.c.posted_at).where(
            instant_posts.c.destination_id == destination_id, instant_posts.c.seq.in_(seqs)
        )
    )
    zone = ZoneInfo(tz)
    return {int(r.seq): r.posted_at.astimezone(zone).strftime(POSTED_FORMAT) for r in rows}


def _combined(parts: Sequence[_Part]) -> tuple[DigestFilter, str]:
    """The filter the merged digest is grouped and capped by, and its title: those of the
    subscriptions that picked something (all of them for an empty digest)."""
    shown = [part for part in parts if part.picked] or list(parts)
    if len(shown) == 1:
        sub = shown[0].sub
        return sub.filter, default_title(sub.filter, sub.label)
    tags = dict.fromkeys(tag for part in shown for tag in part.sub.filter.tags)
    flt = DigestFilter(tags=tuple(tags), max_items=max(part.sub.filter.max_items for part in shown))
    return flt, " · ".join(part.sub.label for part in shown)


async def _build(
    conn: AsyncConnection, destination_id: int, parts: Sequence[_Part], synthesis: bool = False
) -> tuple[Digest, list[int]]:
    """The merged digest (each PR once, saying which subscriptions matched it when several
    picked something) and the seqs the run's `now` subscriptions post."""
    chosen: dict[int, StoredReport] = {}
    matched: dict[int, list[str]] = {}
    for part in parts:
        for item in part.picked:
            chosen.setdefault(item.seq, item)
            matched.setdefault(item.seq, []).append(part.sub.label)
    instant = sorted({item.seq for part in parts if part.sub.instant for item in part.picked})
    posted = await _posted_before(
        conn, destination_id, sorted(set(chosen) - set(instant)), parts[0].sub.timezone
    )
    several = sum(1 for part in parts if part.picked) > 1
    notes = {
        seq: (tuple(names) if several else (), posted.get(seq, ""))
        for seq, names in matched.items()
    }
    flt, title = _combined(parts)
    items = sorted(chosen.values(), key=lambda item: item.seq)
    return build_digest(items, flt, title, notes, synthesis=synthesis), instant


async def plan_run(
    engine: AsyncEngine,
    destination_id: int,
    due: Sequence[Due],
    renderer: Renderer,
    now: datetime,
    windows: WindowCache | None = None,
    reading: ReadingPolicy = DEFAULT_READING,
) -> PlannedRun:
    """Plan the due subscriptions of one destination as one run, once across replicas.
    `windows` shares the reports read among the destinations one tick plans."""
    if not due:
        return PlannedRun(run_id=None, created=False)
    async with write_transaction(engine) as conn:
        await _lock_destination(conn, destination_id)
        run_id = await _new_run(conn, destination_id, max(item.fire for item in due), now)
        parts = [] if run_id is None else await _claim_parts(conn, run_id, due)
        if run_id is None or not parts:
            if run_id is not None:
                await conn.execute(delete(digest_runs).where(digest_runs.c.id == run_id))
            return PlannedRun(run_id=None, created=False)
        label = f"{due[0].subscription.platform.value}:{due[0].subscription.target}"
        start = min(part.start for part in parts)
        window = await _read_window(conn, label, start, windows)
        end = max((item.seq for item in window), default=start)
        marks = await marks_at(conn, destination_id, now)  # snoozed PRs, muted tags leave
        for part in parts:
            picked = select_new(window, part.sub.filter, part.start, part.fire)
            part.picked = [item for item in picked if not marks.quiet(item)]
        parts = await _drop_quiet_instants(conn, run_id, parts, end)
        if not parts:
            await conn.execute(delete(digest_runs).where(digest_runs.c.id == run_id))
            return PlannedRun(run_id=None, created=False)
        return await _finish_plan(
            conn, run_id, destination_id, parts, (start, end), renderer, now, reading
        )


async def _finish_plan(
    conn: AsyncConnection,
    run_id: int,
    destination_id: int,
    parts: list[_Part],
    seqs: tuple[int, int],
    renderer: Renderer,
    now: datetime,
    reading: ReadingPolicy,
) -> PlannedRun:
    """Render the merged digest, queue its messages, record the run and its members."""
    digest, instant = await _build(conn, destination_id, parts, any(p.synthesis for p in parts))
    days = reading.days_at(parts[0].sub.platform.value, parts[0].sub.target)
    carry = any(not part.sub.instant for part in parts)  # a `now` post carries no unread
    digest, options = await with_unread(conn, run_id, destination_id, digest, now, days, carry)
    messages: list[Queued] = []
    if not digest.is_empty or any(part.sub.post_empty for part in parts):
        fire = max(part.fire for part in parts)
        options = dataclasses.replace(options, synthesis=digest.synthesis is not None)
        what = (digest, fire, options)
        messages = await _lay_out(conn, destination_id, parts[0].sub, what, renderer, now)
    await queue(conn, run_id, destination_id, messages, now)
    if messages:
        picked = [item for part in parts for item in part.picked]
        await record_entries(conn, run_id, digest, picked, [m.shows for m in messages])
    for seq in instant:
        values = {"destination_id": destination_id, "seq": seq, "run_id": run_id, "posted_at": now}
        await insert_ignore(conn, instant_posts, values, instant_posts.c.seq)
    for part in parts:
        await conn.execute(
            update(run_members)
            .where(run_members.c.run_id == run_id, run_members.c.subscription_id == part.sub.id)
            .values(from_seq=part.start, to_seq=seqs[1])
        )
    status = RunStatus.PENDING if messages else RunStatus.EMPTY
    await conn.execute(
        update(digest_runs)
        .where(digest_runs.c.id == run_id)
        .values(
            from_seq=seqs[0],
            to_seq=seqs[1],
            entries=digest.total,
            messages=len(messages),
            status=status.value,
            finished_at=None if messages else now,
        )
    )
    if not messages:
        await advance_members(conn, run_id)
    return PlannedRun(run_id, True, status, digest.total, len(messages))


async def _lay_out(
    conn: AsyncConnection,
    destination_id: int,
    lead: Subscription,
    what: tuple[Digest, datetime, DigestOptions],
    renderer: Renderer,
    now: datetime,
) -> list[Queued]:
    """The digest's messages in the layout and verbosity of the run's lead subscription (its
    first member, whose language the run speaks too)."""
    digest, fire, base = what
    fmt = PLATFORM_FORMAT[lead.platform]
    layout = await layout_for(conn, destination_id, Layout(lead.layout), now)
    options = dataclasses.replace(base, layout=layout, verbosity=Verbosity(lead.verbosity))
    parts = renderer.digest_parts(digest, fmt, lead.locale, date=fire.date(), options=options)
    if layout is Layout.TOPICS:
        await prepare_topics(conn, destination_id, parts, (renderer, fmt, lead.locale), now)
    return lay_out(parts, layout)


async def plan_digest(
    engine: AsyncEngine,
    sub: Subscription,
    scheduled_for: datetime,
    renderer: Renderer,
    now: datetime,
    windows: WindowCache | None = None,
    reading: ReadingPolicy = DEFAULT_READING,
    synthesis: bool = False,
) -> PlannedRun:
    """One subscription's run for `scheduled_for` (a destination with one due subscription);
    `synthesis`: its cadence is longer than a day (the scheduler says which)."""
    due = [Due(sub, scheduled_for, synthesis)]
    return await plan_run(engine, sub.destination_id, due, renderer, now, windows, reading)
