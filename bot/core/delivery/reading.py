"""The planner's part of the reading state (`bot/core/store/reading.py` holds the marks).

In the run's own transaction: snoozed PRs and PRs carrying a muted tag leave the
destination's digest; must-read PRs shown here before and not marked read come back as
`Digest.unread` for up to `unread_days` after they were first shown, and the digest after
that says once how many dropped; and the run's entries are recorded (`run_entries`) — which
outbox part shows each PR (a ✅ reaction on a message marks those read), and the ones past
`max_items` that "+N more" pages post later.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from bot.core.render.options import DigestOptions
from bot.core.select import Digest, DigestEntry, StoredReport, group_tag
from bot.core.store.reading import (
    EntryKind,
    EntryRow,
    item_key,
    marks_at,
    previous_run_at,
    reports_by_key,
    shown_must_reads,
    write_entries,
)

DEFAULT_UNREAD_DAYS = 7


@dataclass(frozen=True, slots=True)
class ReadingPolicy:
    """How long unread must-read PRs roll over: `unread_days`, or a destination's own
    (`by_target`, keyed "platform:target")."""

    unread_days: int = DEFAULT_UNREAD_DAYS
    by_target: Mapping[str, int] = field(default_factory=dict)

    def days_at(self, platform: str, target: str) -> int:
        return self.by_target.get(f"{platform}:{target}", self.unread_days)


DEFAULT_READING = ReadingPolicy()


async def with_unread(
    conn: AsyncConnection,
    run_id: int,
    destination_id: int,
    digest: Digest,
    now: datetime,
    unread_days: int,
    carry: bool = True,
) -> tuple[Digest, DigestOptions]:
    """The digest with this destination's unread must-read PRs (unless `carry` is off), and
    the options that give its "+N more" a button (the run id)."""
    options = DigestOptions(more_key=str(run_id) if digest.more else "")
    if not carry:
        return digest, options
    marks = await marks_at(conn, destination_id, now)
    previous = await previous_run_at(conn, destination_id, run_id)
    days = timedelta(days=unread_days)
    shown = await shown_must_reads(conn, destination_id, min(previous or now, now) - days)
    in_digest = {item_key(entry.item) for group in digest.groups for entry in group.entries}
    stored = await reports_by_key(conn, [(pr.repo, pr.number) for pr in shown])
    unread: list[DigestEntry] = []
    dropped = 0
    for pr in shown:
        if pr.key in marks.read or pr.key in in_digest:
            continue
        if pr.first + days <= now:
            dropped += previous is not None and pr.first + days > previous
            continue
        item = stored.get(pr.key)
        if item is not None and not marks.quiet(item):
            unread.append(DigestEntry(item, pr.tag))
    unread.sort(key=lambda entry: entry.item.rank)
    return dataclasses.replace(digest, unread=tuple(unread), unread_dropped=dropped), options


def _part_of(seq: int, shown_in: Sequence[tuple[int, ...]]) -> int | None:
    """The first message that holds the entry of report `seq`."""
    for index, shows in enumerate(shown_in):
        if seq in shows:
            return index
    return 0 if len(shown_in) == 1 else None


async def record_entries(
    conn: AsyncConnection,
    run_id: int,
    digest: Digest,
    picked: Sequence[StoredReport],
    shown_in: Sequence[tuple[int, ...]],
) -> None:
    """The run's PRs in digest order: shown (new, then unread) with the message (in sending
    order; each says which entries it holds) that shows each, then the ones kept for
    "+N more"."""
    shown = [(entry, EntryKind.NEW) for group in digest.groups for entry in group.entries]
    shown += [(entry, EntryKind.UNREAD) for entry in digest.unread]
    rows = [
        EntryRow(i, entry.item, entry.tag, kind, _part_of(entry.item.seq, shown_in))
        for i, (entry, kind) in enumerate(shown)
    ]
    seen = {entry.item.seq for entry, _ in shown}
    rest = sorted({item.seq: item for item in picked if item.seq not in seen}.values(), key=_rank)
    for item in rest:
        rows.append(EntryRow(len(rows), item, group_tag(item.report, ()), EntryKind.MORE, None))
    await write_entries(conn, run_id, rows)


def _rank(item: StoredReport) -> tuple[int, int, datetime, int]:
    return item.rank
