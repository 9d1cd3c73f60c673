"""The report store: reports keyed by (repo, number) with a monotonically increasing ingest seq.

`seq` is what "new since the last digest" is measured by. It is taken from a counter row that
every writing transaction locks first, so seq order is commit order: a digest that read
watermark N can never later miss a report committed with a seq ≤ N.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Text, bindparam, cast, func, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.clock import Clock, utc_clock
from bot.core.digest.select import StoredReport
from bot.core.reports.model import STORED, Report
from bot.core.reports.parse.parser import content_hash
from bot.core.store.errors import REFUSALS, is_outage, refusal_reason
from bot.core.store.search import index_reports
from bot.core.store.sql.db import write_transaction
from bot.core.store.sql.tables import counters, reports

SEQ_COUNTER = "report_seq"
LOOKUP_CHUNK = 400
WINDOW_LIMIT = 2000  # reports one digest run looks at, newest first


class IngestOutcome(StrEnum):
    NEW = "new"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


@dataclass(frozen=True, slots=True)
class IngestResult:
    ref: str
    outcome: IngestOutcome
    seq: int
    revision: int


@dataclass(frozen=True, slots=True)
class StoreRejection:
    """A report the database refused (its reason names the driver's complaint)."""

    ref: str
    reason: str


# The report as the JSON text it is stored as: pydantic parses that straight into the model,
# without the dicts and lists of a decoded JSON value in between.
DATA_TEXT = cast(reports.c.data, Text).label("data")
WINDOW_CHUNK = 25  # rows a window read holds undecoded at a time


def _stored(row: Any) -> StoredReport:
    """A row of (data, seq, revision) as a StoredReport; `data` as text (DATA_TEXT) or as the
    decoded JSON value (a plain `reports.c.data` column)."""
    data = row.data
    if isinstance(data, str | bytes):
        report = Report.model_validate_json(data, context=STORED)
    else:
        report = Report.model_validate(data, context=STORED)
    return StoredReport(
        report=report,
        seq=int(row.seq),
        revision=int(row.revision),
    )


async def _lock_counter(conn: AsyncConnection) -> None:
    # FOR UPDATE serializes writers on PostgreSQL; SQLite is already serialized by BEGIN IMMEDIATE.
    await conn.execute(
        select(counters.c.value).where(counters.c.name == SEQ_COUNTER).with_for_update()
    )


async def _take_seqs(conn: AsyncConnection, count: int) -> list[int]:
    """`count` consecutive sequence numbers (the counter row is already locked)."""
    result = await conn.execute(
        update(counters)
        .where(counters.c.name == SEQ_COUNTER)
        .values(value=counters.c.value + count)
        .returning(counters.c.value)
    )
    last = int(result.scalar_one())
    return list(range(last - count + 1, last + 1))


def _unique_key_batches(
    items: Sequence[tuple[Report, str]],
) -> list[list[tuple[Report, str]]]:
    """Split so that no batch names the same (repo, number) twice (a later copy sees the
    earlier one's write)."""
    batches: list[list[tuple[Report, str]]] = [[]]
    seen: set[tuple[str, int]] = set()
    for report, source in items:
        key = (report.repo, report.number)
        if key in seen:
            batches.append([])
            seen = set()
        seen.add(key)
        batches[-1].append((report, source))
    return [b for b in batches if b]


async def _existing(
    conn: AsyncConnection, keys: list[tuple[str, int]]
) -> dict[tuple[str, int], Any]:
    found: dict[tuple[str, int], Any] = {}
    for start in range(0, len(keys), LOOKUP_CHUNK):
        chunk = keys[start : start + LOOKUP_CHUNK]
        rows = await conn.execute(
            select(
                reports.c.id,
                reports.c.repo,
                reports.c.number,
                reports.c.content_hash,
                reports.c.revision,
                reports.c.seq,
            ).where(tuple_(reports.c.repo, reports.c.number).in_(chunk))
        )
        found.update({(row.repo, int(row.number)): row for row in rows})
    return found


def _values(report: Report, digest: str, source: str, now: datetime) -> dict[str, Any]:
    return {
        "title": report.title,
        "content_hash": digest,
        "data": report.model_dump(mode="json"),
        "tags": " ".join(report.tags),
        "source": source,
        "merged_at": _aware(report.merged_at),
        "updated_at": now,
    }


async def seq_before(conn: AsyncConnection, when: datetime) -> int:
    """The last seq given before `when` (a report's seq is given when it is stored or
    updated): a first digest that covers one window starts after it."""
    found = await conn.execute(select(func.max(reports.c.seq)).where(reports.c.updated_at < when))
    return int(found.scalar() or 0)


async def reports_after(
    conn: AsyncConnection, watermark: int, limit: int = WINDOW_LIMIT
) -> list[StoredReport]:
    """The newest `limit` reports with seq > watermark, oldest first.

    A digest window is normally a day of reports; after a long outage, or for a brand-new
    channel over a large store, it could be the whole history. Capping it keeps a run's memory
    bounded (a digest shows `max_items` entries anyway); what falls outside is logged.

    The rows are read WINDOW_CHUNK at a time (one statement, so one snapshot) and each becomes
    its report at once: the JSON text of the whole window is never in memory beside its
    reports (for 2,000 long reports that was tens of MB at the peak of a catch-up digest)."""
    query = (
        select(DATA_TEXT, reports.c.seq, reports.c.revision)
        .where(reports.c.seq > watermark)
        .order_by(reports.c.seq.desc())
        .limit(limit)
    )
    window: list[StoredReport] = []
    async with conn.stream(query) as result:
        async for rows in result.partitions(WINDOW_CHUNK):
            window.extend(_stored(row) for row in rows)
    window.reverse()
    return window


class WindowCache:
    """Digest windows read once for many destinations (one scheduler tick).

    At 9:00 every subscription with the same schedule is planned in one tick, and most share a
    watermark: reading and validating the same 2,000 reports for each of 10,000 chats was most
    of the planning time. A window is reused only while the store's newest seq is what it was
    when the window was read, so a report that arrived (or was updated) since is never missed.
    """

    def __init__(self, limit: int = WINDOW_LIMIT) -> None:
        self.limit = limit
        # One window at a time (it may hold WINDOW_LIMIT reports, tens of MB): destinations
        # that were delivered together share a watermark, so one is what a tick mostly needs.
        self._window: tuple[int, int, list[StoredReport]] | None = None  # watermark, newest
        # Batches planned at once (PostgreSQL) ask together: one reads, the other waits and
        # shares it. Two reads gave two sets of report objects, and everything a tick keys by
        # its window (picks, digests, rendered entries) was worked out again for each.
        self._reading = asyncio.Lock()

    async def after(self, conn: AsyncConnection, watermark: int) -> list[StoredReport]:
        """`reports_after(conn, watermark)`, read again only when the store has changed."""
        newest = await newest_seq(conn)
        async with self._reading:
            if self._window is not None and self._window[:2] == (watermark, newest):
                return self._window[2]
            self._window = None  # let the old window go before the new one is read
            window = await reports_after(conn, watermark, self.limit)
            self._window = (watermark, newest, window)
            return window


async def newest_seq(conn: AsyncConnection) -> int:
    return int((await conn.execute(select(func.max(reports.c.seq)))).scalar() or 0)


async def count_after(conn: AsyncConnection, watermark: int) -> int:
    query = select(func.count()).select_from(reports).where(reports.c.seq > watermark)
    return int((await conn.execute(query)).scalar_one())


EACH_CHUNK = 500  # reports read per statement by ReportStore.each


class ReportStore:
    """Queries and writes on the `reports` table."""

    def __init__(self, engine: AsyncEngine, clock: Clock = utc_clock) -> None:
        self.engine = engine
        self.clock = clock  # stamps ingested_at / updated_at

    async def upsert(self, report: Report, source: str = "") -> IngestResult:
        return (await self.upsert_many([(report, source)]))[0]

    async def upsert_many(self, items: Sequence[tuple[Report, str]]) -> list[IngestResult]:
        """Store reports in one transaction: new, updated in place (revision+1, new seq), or
        unchanged (nothing written). Set-based: one lookup, one seq grab, two bulk writes."""
        results: list[IngestResult] = []
        async with write_transaction(self.engine) as conn:
            await _lock_counter(conn)
            for batch in _unique_key_batches(items):
                results.extend(await self._upsert_batch(conn, batch))
        return results

    async def upsert_each(
        self, items: Sequence[tuple[Report, str]]
    ) -> list[IngestResult | StoreRejection]:
        """`upsert_many`, except that one report the database refuses cannot sink the others.

        The batch is tried in one transaction (the fast path); if the database refuses it for
        its data, each report is written in its own transaction, and the refused ones come back
        as StoreRejection. The list is aligned with `items`. An outage is raised, never turned
        into rejections: the caller tries again later."""
        try:
            return list(await self.upsert_many(items))
        except REFUSALS as error:
            if is_outage(error):
                raise
        outcomes: list[IngestResult | StoreRejection] = []
        for report, source in items:
            try:
                outcomes.append(await self.upsert(report, source))
            except REFUSALS as error:
                if is_outage(error):
                    raise
                outcomes.append(StoreRejection(report.ref, refusal_reason(error)))
        return outcomes

    async def _upsert_batch(
        self, conn: AsyncConnection, batch: list[tuple[Report, str]]
    ) -> list[IngestResult]:
        now = self.clock()
        existing = await _existing(conn, [(r.repo, r.number) for r, _ in batch])
        digests = [content_hash(report) for report, _ in batch]
        changed = [
            i
            for i, (report, _) in enumerate(batch)
            if (row := existing.get((report.repo, report.number))) is None
            or row.content_hash != digests[i]
        ]
        seqs = (
            dict(zip(changed, await _take_seqs(conn, len(changed)), strict=True)) if changed else {}
        )
        inserts: list[dict[str, Any]] = []
        updates: list[dict[str, Any]] = []
        results: list[IngestResult] = []
        for i, (report, source) in enumerate(batch):
            row = existing.get((report.repo, report.number))
            if i not in seqs:
                assert row is not None  # unchanged means it exists
                results.append(
                    IngestResult(
                        report.ref, IngestOutcome.UNCHANGED, int(row.seq), int(row.revision)
                    )
                )
                continue
            values = {**_values(report, digests[i], source, now), "seq": seqs[i]}
            if row is None:
                inserts.append(
                    {
                        "repo": report.repo,
                        "number": report.number,
                        "revision": 1,
                        "ingested_at": now,
                        **values,
                    }
                )
                results.append(IngestResult(report.ref, IngestOutcome.NEW, seqs[i], 1))
            else:
                revision = int(row.revision) + 1
                updates.append({"row_id": row.id, "revision": revision, **values})
                results.append(IngestResult(report.ref, IngestOutcome.UPDATED, seqs[i], revision))
        if inserts:
            await conn.execute(reports.insert(), inserts)
        if updates:
            await conn.execute(
                update(reports).where(reports.c.id == bindparam("row_id")),
                updates,
            )
        # The full-text index changes with the report, in the same transaction.
        await index_reports(conn, [report for i, (report, _) in enumerate(batch) if i in seqs])
        return results

    async def find(self, number: int, repo: str | None = None) -> list[StoredReport]:
        query = select(DATA_TEXT, reports.c.seq, reports.c.revision).where(
            reports.c.number == number
        )
        if repo is not None:
            query = query.where(func.lower(reports.c.repo) == repo.lower())
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query.order_by(reports.c.repo))).all()
        return [_stored(row) for row in rows]

    async def since(self, watermark: int, limit: int = WINDOW_LIMIT) -> list[StoredReport]:
        """The newest `limit` reports with seq > watermark, oldest first."""
        async with self.engine.connect() as conn:
            return await reports_after(conn, watermark, limit)

    async def each(self) -> AsyncIterator[tuple[Report, datetime]]:
        """Every stored report with when the store first saw it, by seq, EACH_CHUNK at a time
        (one short read each), so a large store is never all in memory."""
        after, chunk = 0, EACH_CHUNK
        while True:
            async with self.engine.connect() as conn:
                rows = (
                    await conn.execute(
                        select(reports.c.data, reports.c.seq, reports.c.ingested_at)
                        .where(reports.c.seq > after)
                        .order_by(reports.c.seq)
                        .limit(chunk)
                    )
                ).all()
            for row in rows:
                yield Report.model_validate(row.data, context=STORED), row.ingested_at
            if len(rows) < chunk:
                return
            after = int(rows[-1].seq)

    async def count(self) -> int:
        async with self.engine.connect() as conn:
            return int((await conn.execute(select(func.count()).select_from(reports))).scalar_one())

    async def tag_counts(self, since: datetime | None = None) -> list[tuple[str, int]]:
        """Known tags with how many reports carry them (ingested or updated since `since`)."""
        query = select(reports.c.tags)
        if since is not None:
            query = query.where(reports.c.updated_at >= since)
        counts: Counter[str] = Counter()
        async with self.engine.connect() as conn:
            for (tags,) in (await conn.execute(query)).all():
                counts.update(str(tags).split())
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def _aware(value: datetime | None) -> datetime | None:
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)
