"""The planner's part of the reading state (`bot/core/store/reading.py` holds the marks).

In the run's own transaction: snoozed PRs and PRs carrying a muted tag leave the
destination's digest; must-read PRs shown here before and not marked read come back as
`Digest.unread` for up to `unread_days` after they were first shown, and the digest after
that says once how many dropped; and the run's entries are laid out (its edition's
`edition_entries`) — which message shows each PR (a ✅ reaction on a message marks those
read), and the ones past `max_items` that "+N more" pages post later. The planner reads what
every destination of a batch showed before in a few grouped queries (`shown_before`); the rest
is arithmetic on what they returned.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from operator import attrgetter

from sqlalchemy.ext.asyncio import AsyncConnection

from bot.core.digest.select import Digest, DigestEntry, StoredReport
from bot.core.store.editions import EntryKind, EntryRow
from bot.core.store.reading import (
    Marks,
    ShownPR,
    item_key,
    previous_runs_at,
    reports_by_key,
    shown_must_reads_in,
    with_digests,
)

DEFAULT_UNREAD_DAYS = 7


@dataclass(frozen=True, slots=True)
class ReadingPolicy:
    """How long unread must-read PRs roll over: `unread_days`, or a destination's own
    (`by_target`, keyed "platform:target")."""

    unread_days: int = DEFAULT_UNREAD_DAYS
    by_target: Mapping[str, int] = field(default_factory=dict)

    def days_at(self, platform: str, target: str) -> int:
        if not self.by_target:  # (asked for every destination a tick plans)
            return self.unread_days
        return self.by_target.get(f"{platform}:{target}", self.unread_days)


DEFAULT_READING = ReadingPolicy()


@dataclass(frozen=True, slots=True)
class Shown:
    """What a destination's digests showed before that may come back as unread."""

    previous: datetime | None  # its last digest (None: none yet)
    prs: tuple[ShownPR, ...]  # must-read PRs first shown within its unread_days
    stored: Mapping[str, StoredReport]  # their reports, by PR key


NOTHING_SHOWN = Shown(None, (), {})  # a destination with no digest stored


async def shown_before(
    conn: AsyncConnection, days: Mapping[int, int], now: datetime
) -> dict[int, Shown]:
    """For each destination (with its unread_days), what may come back: four queries, three
    of them only about the destinations with a digest stored (on a first tick, none)."""
    ids = await with_digests(conn, list(days))
    previous = await previous_runs_at(conn, ids) if ids else {}
    # One with no scheduled digest posted before reads back from `days` before now.
    since = {d: min(previous.get(d) or now, now) - timedelta(days=days[d]) for d in ids}
    found = await shown_must_reads_in(conn, ids, min(since.values(), default=now))
    prs = {d: tuple(pr for pr in found.get(d, ()) if pr.first > since[d]) for d in ids}
    keys = {(pr.repo, pr.number) for shown in prs.values() for pr in shown}
    stored = await reports_by_key(conn, sorted(keys))
    shown = {d: Shown(previous.get(d), prs[d], stored) for d in ids}
    return {d: shown.get(d, NOTHING_SHOWN) for d in days}


def with_unread(digest: Digest, shown: Shown, marks: Marks, days: int, now: datetime) -> Digest:
    """The digest with the destination's unread must-read PRs, and how many dropped now."""
    if not shown.prs:
        return digest
    in_digest = {item_key(entry.item) for group in digest.groups for entry in group.entries}
    unread: list[DigestEntry] = []
    dropped = 0
    span = timedelta(days=days)
    for pr in shown.prs:
        if pr.key in marks.read or pr.key in in_digest:
            continue
        if pr.first + span <= now:
            dropped += shown.previous is not None and pr.first + span > shown.previous
            continue
        item = shown.stored.get(pr.key)
        if item is not None and not marks.quiet(item):
            unread.append(DigestEntry(item, pr.tag))
    if not unread and not dropped:
        return digest
    unread.sort(key=lambda entry: entry.item.rank)
    return _within_budget(dataclasses.replace(digest, unread_dropped=dropped), unread)


def _within_budget(digest: Digest, unread: Sequence[DigestEntry]) -> Digest:
    """One budget for the whole digest: the new entries it shows first, then as many unread
    ones as fit; the rest waits behind "+N more", which counts each PR not shown exactly once
    (a new PR past the budget that is listed as unread is shown, not "more")."""
    room = len(unread) if digest.budget is None else max(digest.budget - digest.shown, 0)
    listed, over = tuple(unread[:room]), tuple(unread[room:])
    listed_seqs = {entry.item.seq for entry in listed}
    behind = {item.seq for item in digest.overflow} | {entry.item.seq for entry in over}
    return dataclasses.replace(
        digest, unread=listed, unread_over=over, more=len(behind - listed_seqs)
    )


def entry_rows(
    digest: Digest, picked: Sequence[StoredReport], shown_in: Sequence[tuple[int, ...]]
) -> tuple[list[EntryRow], list[StoredReport]]:
    """The digest's PRs in order: shown (new, then unread) with the message (in sending order;
    each says which entries it holds) that shows each first; then the ones kept for "+N
    more". An entry no message names is in the only message, if there is one."""
    shown = [(entry, EntryKind.NEW) for group in digest.groups for entry in group.entries]
    shown += [(entry, EntryKind.UNREAD) for entry in digest.unread]
    part_of = {seq: part for part, shows in reversed(list(enumerate(shown_in))) for seq in shows}
    unnamed = 0 if len(shown_in) == 1 else None
    rows = [
        EntryRow(i, entry.item, entry.tag, kind, part_of.get(entry.item.seq, unnamed))
        for i, (entry, kind) in enumerate(shown)
    ]
    seen = {entry.item.seq for entry, _ in shown}
    behind = [*picked, *(entry.item for entry in digest.unread_over)]
    rest = sorted({item.seq: item for item in behind if item.seq not in seen}.values(), key=_RANK)
    return rows, rest


_RANK = attrgetter("rank")
