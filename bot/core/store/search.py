"""The full-text index of the reports: which reports contain every one of some words.

A word is a substring of a report's normalized text fields (NFKC, casefolded, whitespace runs
as one space), never of two fields joined: the same answer as a scan over the stored reports,
with no stemming and no dictionary, so a two-character Chinese word such as 权重 is found.

- SQLite: an FTS5 table with the trigram tokenizer (`report_fts`, one column per field) answers
  words of three characters or more; words of one or two characters, which have no trigram,
  are looked up in `report_grams`, an FTS5 table of each report's distinct characters and
  character pairs (written as ASCII tokens, rowids only).
- PostgreSQL: `report_search` holds the fields joined by a separator that normalized text
  never contains (`body`, a pg_trgm GIN index answers LIKE) and the same characters and pairs
  (`grams`, a GIN-indexed array).

The index is written in the transaction that writes the report (ReportStore), filled by the
migration that creates it, and rebuilt by `prdigest migrate`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import (
    Connection,
    Select,
    Text,
    column,
    delete,
    insert,
    intersect,
    select,
    table,
    text,
    tuple_,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.query.text import TEXT_FIELDS, normalize_text
from bot.core.reports.model import STORED, Report
from bot.core.store.db import MIGRATION_LOCK_KEY, write_transaction
from bot.core.store.tables import reports

# Normalized text never holds it (str.split() counts it as whitespace), so a word cannot
# match across two fields joined by it; NUL, which PostgreSQL text refuses, is stored as it.
SEP = "\x1f"
BATCH = 500  # reports per statement when filling or looking up
GRAM_LIMIT = 2  # words this short are looked up by their characters, not by trigrams

SQLITE_SCHEMA = (
    "CREATE VIRTUAL TABLE report_fts USING fts5("
    + ", ".join(TEXT_FIELDS)
    + ", tokenize='trigram case_sensitive 1')",
    "CREATE VIRTUAL TABLE report_grams USING fts5(grams, tokenize='ascii', detail=none)",
)
SQLITE_DROP = ("DROP TABLE IF EXISTS report_fts", "DROP TABLE IF EXISTS report_grams")
# The index tables as SQLAlchemy sees them (created by migration 0006, not by metadata).
_fts = table("report_fts", column("rowid"), *(column(name) for name in TEXT_FIELDS))
_grams = table("report_grams", column("rowid"), column("grams"))
_search = table(
    "report_search", column("report_id"), column("body", Text), column("grams", ARRAY(Text))
)
REBUILD_LOCK = text("SELECT pg_advisory_xact_lock(:key)")
_FTS_MATCH = text("report_fts MATCH :long")
_GRAMS_MATCH = text("report_grams MATCH :short")


def field_texts(report: Report) -> list[str]:
    """The normalized text of each indexed field, in TEXT_FIELDS order."""
    return [normalize_text(str(getattr(report, name))) for name in TEXT_FIELDS]


def _stored_texts(report: Report) -> list[str]:
    return [t.replace("\x00", SEP) for t in field_texts(report)]


def grams(texts: Iterable[str]) -> set[str]:
    """Every character and every pair of neighbouring characters within one text."""
    found: set[str] = set()
    for value in texts:
        found.update(value)
        found.update(value[i : i + 2] for i in range(len(value) - 1))
    return found


def gram_token(gram: str) -> str:
    """A character or pair as an ASCII word the FTS5 `ascii` tokenizer keeps whole."""
    return "g" + "x".join(f"{ord(c):x}" for c in gram)


def _fts_phrase(needle: str) -> str:
    return '"' + needle.replace('"', '""') + '"'


# --- writing -------------------------------------------------------------------------------


def _write_sqlite(conn: Connection, rows: Sequence[tuple[int, Report]]) -> None:
    ids = [row_id for row_id, _ in rows]
    conn.execute(delete(_fts).where(_fts.c.rowid.in_(ids)))
    conn.execute(delete(_grams).where(_grams.c.rowid.in_(ids)))
    fts: list[dict[str, Any]] = []
    gram_rows: list[dict[str, Any]] = []
    for row_id, report in rows:
        texts = _stored_texts(report)
        fts.append({"rowid": row_id, **dict(zip(TEXT_FIELDS, texts, strict=True))})
        tokens = " ".join(sorted(gram_token(g) for g in grams(texts) if SEP not in g))
        gram_rows.append({"rowid": row_id, "grams": tokens})
    conn.execute(insert(_fts), fts)
    conn.execute(insert(_grams), gram_rows)


def _write_postgres(conn: Connection, rows: Sequence[tuple[int, Report]]) -> None:
    values: list[dict[str, Any]] = []
    for row_id, report in rows:
        texts = _stored_texts(report)
        found = sorted(g for g in grams(texts) if SEP not in g)
        values.append({"report_id": row_id, "body": SEP.join(texts), "grams": found})
    statement = pg_insert(_search)
    conn.execute(
        statement.on_conflict_do_update(
            index_elements=["report_id"],
            set_={"body": statement.excluded.body, "grams": statement.excluded.grams},
        ),
        values,
    )


def write_index(conn: Connection, rows: Sequence[tuple[int, Report]]) -> None:
    """Index (or index again) these reports, by their `reports.id`."""
    if not rows:
        return
    if conn.dialect.name == "sqlite":
        _write_sqlite(conn, rows)
    else:
        _write_postgres(conn, rows)


async def index_reports(conn: AsyncConnection, written: Sequence[Report]) -> None:
    """Bring the index up to date with reports just inserted or updated in this transaction."""
    rows: list[tuple[int, Report]] = []
    for start in range(0, len(written), BATCH):
        chunk = written[start : start + BATCH]
        keys = [(r.repo, r.number) for r in chunk]
        found = await conn.execute(
            select(reports.c.id, reports.c.repo, reports.c.number).where(
                tuple_(reports.c.repo, reports.c.number).in_(keys)
            )
        )
        ids = {(row.repo, int(row.number)): int(row.id) for row in found}
        rows.extend((ids[(r.repo, r.number)], r) for r in chunk)
    await conn.run_sync(write_index, rows)


def fill_index(conn: Connection) -> int:
    """Empty the index and index every stored report, BATCH at a time; how many were."""
    for index_table in (_fts, _grams) if conn.dialect.name == "sqlite" else (_search,):
        conn.execute(delete(index_table))
    count, last = 0, 0
    while True:
        batch = conn.execute(
            select(reports.c.id, reports.c.data)
            .where(reports.c.id > last)
            .order_by(reports.c.id)
            .limit(BATCH)
        ).all()
        if not batch:
            return count
        write_index(
            conn, [(int(r.id), Report.model_validate(r.data, context=STORED)) for r in batch]
        )
        count += len(batch)
        last = int(batch[-1].id)


async def rebuild_index(engine: AsyncEngine) -> int:
    """Index every stored report again (`prdigest migrate`); how many were indexed."""
    async with write_transaction(engine) as conn:
        if conn.dialect.name == "postgresql":  # replicas starting at once rebuild in turn
            await conn.execute(REBUILD_LOCK, {"key": MIGRATION_LOCK_KEY})
        return await conn.run_sync(fill_index)


# --- reading -------------------------------------------------------------------------------


def _sqlite_query(long: list[str], short: list[str]) -> Any:
    parts: list[Select[Any]] = []
    if long:
        phrases = " AND ".join(_fts_phrase(n) for n in long)
        parts.append(select(_fts.c.rowid).where(_FTS_MATCH.bindparams(long=phrases)))
    if short:
        tokens = " AND ".join(gram_token(n) for n in short)
        parts.append(select(_grams.c.rowid).where(_GRAMS_MATCH.bindparams(short=tokens)))
    return parts[0] if len(parts) == 1 else intersect(*parts)


def _postgres_query(long: list[str], short: list[str]) -> Any:
    query = select(_search.c.report_id)
    for needle in long:
        escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        query = query.where(_search.c.body.like(f"%{escaped}%", escape="\\"))
    if short:
        query = query.where(_search.c.grams.contains(short))
    return query


async def _verified(conn: AsyncConnection, ids: list[int], needles: list[str]) -> list[int]:
    """The ids whose fields hold every needle, read from the reports themselves (for needles
    holding a NUL, which the index stores as the separator)."""
    kept: list[int] = []
    for start in range(0, len(ids), BATCH):
        chunk = ids[start : start + BATCH]
        rows = await conn.execute(
            select(reports.c.id, reports.c.data).where(reports.c.id.in_(chunk))
        )
        for row in rows:
            texts = field_texts(Report.model_validate(row.data, context=STORED))
            if all(any(n in t for t in texts) for n in needles):
                kept.append(int(row.id))
    return sorted(kept)


async def text_candidates(engine: AsyncEngine, needles: list[str]) -> list[int]:
    """Ids of the reports whose normalized text holds every needle (already normalized), one
    needle within one field; ascending. No needle (or only empty ones): every report."""
    wanted = sorted({n for n in needles if n})
    odd = [n for n in wanted if "\x00" in n or SEP in n]
    plain = [n for n in wanted if n not in odd]
    long = [n for n in plain if len(n) > GRAM_LIMIT]
    short = [n for n in plain if len(n) <= GRAM_LIMIT]
    async with engine.connect() as conn:
        if not plain:
            query: Any = select(reports.c.id)
        elif conn.dialect.name == "sqlite":
            query = _sqlite_query(long, short)
        else:
            query = _postgres_query(long, short)
        ids = sorted(int(row[0]) for row in await conn.execute(query))
        if odd:
            ids = await _verified(conn, ids, odd)
    return ids
