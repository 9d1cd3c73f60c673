"""The report store: reports keyed by (repo, number) with a monotonically increasing ingest seq.

`seq` is what "new since the last digest" is measured by. It is taken from a counter row that
every writing transaction locks first, so seq order is commit order: a digest that read
watermark N can never later miss a report committed with a seq ≤ N.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.db import write_transaction
from bot.core.parse import content_hash
from bot.core.report import Report
from bot.core.select import StoredReport
from bot.core.tables import counters, reports

SEQ_COUNTER = "report_seq"


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


def utcnow() -> datetime:
    return datetime.now(UTC)


def _stored(row: Any) -> StoredReport:
    return StoredReport(
        report=Report.model_validate(row.data), seq=int(row.seq), revision=int(row.revision)
    )


async def _lock_counter(conn: AsyncConnection) -> None:
    # FOR UPDATE serializes writers on PostgreSQL; SQLite is already serialized by BEGIN IMMEDIATE.
    await conn.execute(
        select(counters.c.value).where(counters.c.name == SEQ_COUNTER).with_for_update()
    )


async def _next_seq(conn: AsyncConnection) -> int:
    result = await conn.execute(
        update(counters)
        .where(counters.c.name == SEQ_COUNTER)
        .values(value=counters.c.value + 1)
        .returning(counters.c.value)
    )
    return int(result.scalar_one())


class ReportStore:
    """Queries and writes on the `reports` table."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def upsert(self, report: Report, source: str = "") -> IngestResult:
        return (await self.upsert_many([(report, source)]))[0]

    async def upsert_many(self, items: Sequence[tuple[Report, str]]) -> list[IngestResult]:
        """Store reports in one transaction: new, updated in place (revision+1, new seq), or
        unchanged (nothing written)."""
        async with write_transaction(self.engine) as conn:
            await _lock_counter(conn)
            return [await self._upsert_one(conn, report, source) for report, source in items]

    async def _upsert_one(self, conn: AsyncConnection, report: Report, source: str) -> IngestResult:
        digest = content_hash(report)
        existing = (
            await conn.execute(
                select(
                    reports.c.id, reports.c.content_hash, reports.c.revision, reports.c.seq
                ).where(reports.c.repo == report.repo, reports.c.number == report.number)
            )
        ).first()
        if existing is not None and existing.content_hash == digest:
            return IngestResult(
                report.ref, IngestOutcome.UNCHANGED, int(existing.seq), int(existing.revision)
            )
        now = utcnow()
        seq = await _next_seq(conn)
        values = {
            "title": report.title,
            "seq": seq,
            "content_hash": digest,
            "data": report.model_dump(mode="json"),
            "tags": " ".join(report.tags),
            "source": source,
            "merged_at": _aware(report.merged_at),
            "updated_at": now,
        }
        if existing is None:
            await conn.execute(
                reports.insert().values(
                    repo=report.repo, number=report.number, revision=1, ingested_at=now, **values
                )
            )
            return IngestResult(report.ref, IngestOutcome.NEW, seq, 1)
        revision = int(existing.revision) + 1
        await conn.execute(
            update(reports).where(reports.c.id == existing.id).values(revision=revision, **values)
        )
        return IngestResult(report.ref, IngestOutcome.UPDATED, seq, revision)

    async def find(self, number: int, repo: str | None = None) -> list[StoredReport]:
        query = select(reports.c.data, reports.c.seq, reports.c.revision).where(
            reports.c.number == number
        )
        if repo is not None:
            query = query.where(func.lower(reports.c.repo) == repo.lower())
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query.order_by(reports.c.repo))).all()
        return [_stored(row) for row in rows]

    async def since(self, watermark: int, limit: int | None = None) -> list[StoredReport]:
        """Reports with seq > watermark, oldest first."""
        query = (
            select(reports.c.data, reports.c.seq, reports.c.revision)
            .where(reports.c.seq > watermark)
            .order_by(reports.c.seq)
        )
        if limit is not None:
            query = query.limit(limit)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [_stored(row) for row in rows]

    async def max_seq(self) -> int:
        async with self.engine.connect() as conn:
            value = (await conn.execute(select(func.max(reports.c.seq)))).scalar()
        return int(value or 0)

    async def count(self) -> int:
        async with self.engine.connect() as conn:
            return int((await conn.execute(select(func.count()).select_from(reports))).scalar_one())

    async def search(self, words: Sequence[str], limit: int = 10) -> list[StoredReport]:
        """Reports whose title or tags contain every word (case-insensitive), newest first."""
        query = select(reports.c.data, reports.c.seq, reports.c.revision)
        for word in words:
            pattern = f"%{_escape_like(word.lower())}%"
            query = query.where(
                or_(
                    func.lower(reports.c.title).like(pattern, escape="\\"),
                    func.lower(reports.c.tags).like(pattern, escape="\\"),
                )
            )
        query = query.order_by(reports.c.seq.desc()).limit(limit)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [_stored(row) for row in rows]

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


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _aware(value: datetime | None) -> datetime | None:
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)
