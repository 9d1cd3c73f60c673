"""The full-text index of the reports, and writing it (text_lookup.py reads it).

A word is a substring of a report's normalized text fields (NFKC, casefolded, whitespace runs
as one space), or of one of its related-PR lines or key-file notes (query/reading.list_texts),
never of two fields or lines joined: the same answer as a scan over the stored reports, with
no stemming and no dictionary, so a two-character Chinese word such as 权重 is found.

- SQLite: a contentless FTS5 table with the trigram tokenizer (`report_fts`, one column per
  field) answers words of three characters or more; words of one or two characters, which
  have no trigram, are looked up in `report_grams`, a contentless FTS5 table of each report's
  distinct characters and character pairs (written as ASCII tokens, detail=none). Contentless
  tables keep only the index, not a second copy of the text, but cannot delete a row by its
  id: so their rowid is the report's `seq`, which every write renews, and the facets row
  (`report_facets.seq`) says which one is current. A replaced version's postings stay until
  `prdigest migrate` rebuilds the index; they match no facets row, so never a report.
- PostgreSQL: `report_search` holds the fields joined by a separator that normalized text
  never contains (`body`, a pg_trgm GIN index on it with spaces as letters answers LIKE, see
  text_lookup.PHRASE_JOIN) and the same characters and pairs (`grams`, a GIN-indexed array),
  one row per report, replaced on update.

Whole words (query/text.py: `ci` is not in "specific") are asked of each report's word list,
the distinct runs of word characters of its text: `report_words` (SQLite, FTS5, rowid the seq
as above; `roll*` is an FTS5 prefix query) and `report_search.words` (PostgreSQL, a
GIN-indexed array; a word's start is checked row by row among the reports holding it as
text).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Final

from sqlalchemy import (
    Connection,
    Text,
    column,
    delete,
    insert,
    select,
    table,
    text,
    tuple_,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.query.reading import LIST_FIELDS, list_texts
from bot.core.query.text import SEP, TEXT_FIELDS, normalize_text, word_tokens
from bot.core.reports.model import STORED, Report
from bot.core.store.search.facets import write_facets
from bot.core.store.sql.db import MIGRATION_LOCK_KEY, write_transaction
from bot.core.store.sql.tables import report_facets, reports

BATCH = 500  # reports per statement when filling or looking up
GRAM_LIMIT = 2  # words this short are looked up by their characters, not by trigrams
# The indexed fields: the text fields, then the related-PR lines and the key files' notes
# (query/reading.list_texts), each its own FTS5 column (migration 0019).
INDEX_FIELDS: Final = (*TEXT_FIELDS, *LIST_FIELDS)

SQLITE_SCHEMA = (
    "CREATE VIRTUAL TABLE report_fts USING fts5("
    + ", ".join(INDEX_FIELDS)
    + ", tokenize='trigram case_sensitive 1', content='')",
    "CREATE VIRTUAL TABLE report_grams USING fts5("
    "grams, tokenize='ascii', detail=none, content='')",
    # The words are written space-separated; `ascii` keeps non-ASCII letters in a token, and
    # `_` is a word character.
    "CREATE VIRTUAL TABLE report_words USING fts5("
    "words, tokenize=\"ascii tokenchars '_'\", detail=none, content='')",
)
# Contentless tables are emptied by a command, not by DELETE.
SQLITE_EMPTY = (
    "INSERT INTO report_fts(report_fts) VALUES ('delete-all')",
    "INSERT INTO report_grams(report_grams) VALUES ('delete-all')",
    "INSERT INTO report_words(report_words) VALUES ('delete-all')",
)
SQLITE_DROP = (
    "DROP TABLE IF EXISTS report_fts",
    "DROP TABLE IF EXISTS report_grams",
    "DROP TABLE IF EXISTS report_words",
)
# The index tables as SQLAlchemy sees them (created by migrations 0006-0007, not by metadata).
FTS = table("report_fts", column("rowid"), *(column(name) for name in INDEX_FIELDS))
GRAMS = table("report_grams", column("rowid"), column("grams"))
WORDS = table("report_words", column("rowid"), column("words"))
SEARCH = table(
    "report_search",
    column("report_id"),
    column("body", Text),
    column("grams", ARRAY(Text)),
    column("words", ARRAY(Text)),
)
REBUILD_LOCK = text("SELECT pg_advisory_xact_lock(:key)")

# One report to index: its reports.id, seq, when the store first saw it, and the report.
IndexRow = tuple[int, int, datetime, Report]
_ROW_COLUMNS = (reports.c.id, reports.c.seq, reports.c.ingested_at)


def _index_row(row: Any, report: Report) -> IndexRow:
    return int(row.id), int(row.seq), row.ingested_at, report


def field_texts(report: Report) -> list[str]:
    """The normalized text of each indexed field, in INDEX_FIELDS order (a list field's lines
    joined by SEP)."""
    texts = [normalize_text(str(getattr(report, name))) for name in TEXT_FIELDS]
    return texts + list(list_texts(report).values())


def _stored_texts(report: Report) -> list[str]:
    return [t.replace("\x00", SEP) for t in field_texts(report)]


def words_of(texts: Iterable[str]) -> list[str]:
    """The distinct whole words of these texts (query/text.word_tokens), sorted."""
    found: set[str] = set()
    for value in texts:
        found |= word_tokens(value)
    return sorted(found)


def _chars_and_pairs(texts: Iterable[str]) -> tuple[set[str], set[tuple[str, str]]]:
    chars: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for value in texts:
        chars.update(value)
        pairs.update(itertools.pairwise(value))
    return chars, pairs


def grams(texts: Iterable[str]) -> set[str]:
    """Every character and every pair of neighbouring characters within one text, but for
    those holding a space or SEP: a word is trimmed, so one of one or two characters never
    holds a space, and none holds SEP."""
    chars, pairs = _chars_and_pairs(texts)
    found = {a + b for a, b in pairs if a not in _UNASKED and b not in _UNASKED}
    found.update(chars - _UNASKED)
    return found


def gram_tokens(texts: Iterable[str]) -> str:
    """`gram_token` of every gram of `grams(texts)`, space-separated (the hot loop of
    indexing a report, in one pass)."""
    chars, pairs = _chars_and_pairs(texts)
    tokens = [gram_token(char) for char in chars - _UNASKED]
    for a, b in pairs:
        if a in _UNASKED or b in _UNASKED:
            continue
        if a in _SPLITTERS or b in _SPLITTERS:
            tokens.append(f"g{ord(a):x}x{ord(b):x}")
        else:
            tokens.append(a + b)
    return " ".join(tokens)


# The `ascii` tokenizer splits at these and keeps every other character (ASCII letters and
# digits, and all of non-ASCII) in a token: a gram without them is its own token, `权重`.
_SPLITTERS: Final = frozenset(chr(code) for code in range(128) if not chr(code).isalnum())
_UNASKED: Final = frozenset((" ", SEP))


def gram_token(gram: str) -> str:
    """A character or pair as a word the FTS5 `ascii` tokenizer keeps whole: itself, or when
    it holds a splitter, `g` and its hex codes (`a,` is `g61x2c`; never two characters long,
    so never another gram)."""
    if gram[0] not in _SPLITTERS and gram[-1] not in _SPLITTERS:
        return gram
    return "g" + "x".join(f"{ord(c):x}" for c in gram)


def fts_phrase(needle: str) -> str:
    return '"' + needle.replace('"', '""') + '"'


# --- writing -------------------------------------------------------------------------------


def _write_sqlite(conn: Connection, rows: Sequence[IndexRow]) -> None:
    fts: list[dict[str, Any]] = []
    gram_rows: list[dict[str, Any]] = []
    word_rows: list[dict[str, Any]] = []
    for _, seq, _, report in rows:  # keyed by the write's new seq: nothing to delete
        texts = _stored_texts(report)
        fts.append({"rowid": seq, **dict(zip(INDEX_FIELDS, texts, strict=True))})
        gram_rows.append({"rowid": seq, "grams": gram_tokens(texts)})
        word_rows.append({"rowid": seq, "words": " ".join(words_of(texts))})
    conn.execute(insert(FTS), fts)
    conn.execute(insert(GRAMS), gram_rows)
    conn.execute(insert(WORDS), word_rows)


def _write_postgres(conn: Connection, rows: Sequence[IndexRow]) -> None:
    values: list[dict[str, Any]] = []
    for row_id, _, _, report in rows:
        texts = _stored_texts(report)
        found = sorted(grams(texts))
        values.append(
            {
                "report_id": row_id,
                "body": SEP.join(texts),
                "grams": found,
                "words": words_of(texts),
            }
        )
    statement = pg_insert(SEARCH)
    conn.execute(
        statement.on_conflict_do_update(
            index_elements=["report_id"],
            set_={
                "body": statement.excluded.body,
                "grams": statement.excluded.grams,
                "words": statement.excluded.words,
            },
        ),
        values,
    )


def write_index(conn: Connection, rows: Sequence[IndexRow]) -> None:
    """Index (or index again) these reports: their text and their facets."""
    if not rows:
        return
    if conn.dialect.name == "sqlite":
        _write_sqlite(conn, rows)
    else:
        _write_postgres(conn, rows)
    write_facets(conn, rows)


async def index_reports(conn: AsyncConnection, written: Sequence[Report]) -> None:
    """Bring the index up to date with reports just inserted or updated in this transaction."""
    rows: list[IndexRow] = []
    for start in range(0, len(written), BATCH):
        chunk = written[start : start + BATCH]
        keys = [(r.repo, r.number) for r in chunk]
        found = await conn.execute(
            select(*_ROW_COLUMNS, reports.c.repo, reports.c.number).where(
                tuple_(reports.c.repo, reports.c.number).in_(keys)
            )
        )
        stored = {(row.repo, int(row.number)): row for row in found}
        rows.extend(_index_row(stored[(r.repo, r.number)], r) for r in chunk)
    await conn.run_sync(write_index, rows)


def fill_index(conn: Connection) -> int:
    """Empty the index and index every stored report, BATCH at a time; how many were."""
    if conn.dialect.name == "sqlite":
        for statement in SQLITE_EMPTY:
            conn.execute(text(statement))
    else:
        conn.execute(delete(SEARCH))
    conn.execute(delete(report_facets))
    count, last = 0, 0
    while True:
        batch = conn.execute(
            select(*_ROW_COLUMNS, reports.c.data)
            .where(reports.c.id > last)
            .order_by(reports.c.id)
            .limit(BATCH)
        ).all()
        if not batch:
            return count
        write_index(
            conn, [_index_row(r, Report.model_validate(r.data, context=STORED)) for r in batch]
        )
        count += len(batch)
        last = int(batch[-1].id)


async def rebuild_index(engine: AsyncEngine) -> int:
    """Index every stored report again (`prdigest migrate`); how many were indexed."""
    async with write_transaction(engine) as conn:
        if conn.dialect.name == "postgresql":  # replicas starting at once rebuild in turn
            await conn.execute(REBUILD_LOCK, {"key": MIGRATION_LOCK_KEY})
        return await conn.run_sync(fill_index)
