"""Reading the full-text index (text_index.py): which reports hold every needle of a query.

A substring is asked of the trigram index (three characters or more) or of the characters and
pairs (shorter), a whole word or a word's start of the word lists; the statement is a
condition on `report_facets`, so compile.py combines it with the field terms.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import (
    ColumnElement,
    FromClause,
    Select,
    and_,
    bindparam,
    func,
    intersect,
    literal,
    literal_column,
    or_,
    select,
    text,
    true,
)

from bot.core.store.search.facets import RANK_COLUMNS
from bot.core.store.search.text_index import (
    FTS,
    GRAM_LIMIT,
    GRAMS,
    SEARCH,
    WORDS,
    fts_phrase,
    gram_token,
)
from bot.core.store.sql.tables import report_facets

# PostgreSQL's trigram index (migration 0008) reads the text with each space as PHRASE_JOIN:
# pg_trgm splits its trigrams at anything but letters and digits, so on the text itself a
# phrase's trigrams are its words', found in any order anywhere; as one word they span the
# space. A needle without a space or an x is found in that text exactly where in the text;
# one with either is checked in the text too. The query must spell the index's expression.
PHRASE_JOIN: Final = "x"
_PHRASE_TEXT = func.translate(
    SEARCH.c.body, literal_column("' '"), literal_column(f"'{PHRASE_JOIN}'")
)
# Unique parameters: a compiled query may ask the index several times in one statement.
_FTS_MATCH = text("report_fts MATCH :long")
_GRAMS_MATCH = text("report_grams MATCH :short")
_WORDS_MATCH = text("report_words MATCH :words")

# An inclusive range of report seqs: numbers, or parameters a statement is run with.
Seqs = tuple[int | ColumnElement[int], int | ColumnElement[int]]


@dataclass(frozen=True, slots=True)
class Needles:
    """What a report's text must hold: substrings (normalized, none empty, none holding NUL
    or SEP), whole words, and words' starts (both runs of word characters)."""

    texts: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    starts: tuple[str, ...] = ()

    def __add__(self, other: Needles) -> Needles:
        return Needles(
            _merged(self.texts, other.texts),
            _merged(self.words, other.words),
            _merged(self.starts, other.starts),
        )


def _merged(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted({*first, *second}))


def _sqlite_rows(needles: Needles, seqs: Seqs | None) -> Any:
    parts: list[Select[Any]] = []
    long = [w for w in needles.texts if len(w) > GRAM_LIMIT]
    short = [w for w in needles.texts if len(w) <= GRAM_LIMIT]
    if long:
        phrases = " AND ".join(fts_phrase(n) for n in long)
        match = _FTS_MATCH.bindparams(bindparam("long", phrases, unique=True))
        parts.append(_in_range(select(FTS.c.rowid).where(match), FTS.c.rowid, seqs))
    if short:
        tokens = " AND ".join(fts_phrase(gram_token(n)) for n in short)
        match = _GRAMS_MATCH.bindparams(bindparam("short", tokens, unique=True))
        parts.append(_in_range(select(GRAMS.c.rowid).where(match), GRAMS.c.rowid, seqs))
    if needles.words or needles.starts:
        asked = [fts_phrase(w) for w in needles.words]
        asked += [fts_phrase(start) + " *" for start in needles.starts]
        match = _WORDS_MATCH.bindparams(bindparam("words", " AND ".join(asked), unique=True))
        parts.append(_in_range(select(WORDS.c.rowid).where(match), WORDS.c.rowid, seqs))
    return parts[0] if len(parts) == 1 else intersect(*parts)


def _in_range(query: Select[Any], rowid: Any, seqs: Seqs | None) -> Select[Any]:
    """Only the postings of these seqs: FTS5 seeks its lists to the range and reads no more."""
    return query if seqs is None else query.where(rowid.between(*seqs))


def _like_escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _postgres_rows(needles: Needles) -> Any:
    query = select(SEARCH.c.report_id)
    short: list[str] = []
    for needle in (*needles.texts, *needles.starts):  # a word's start is in the text too
        if len(needle) <= GRAM_LIMIT:
            short.append(needle)
            continue
        joined = needle.replace(" ", PHRASE_JOIN)
        query = query.where(_PHRASE_TEXT.like(f"%{_like_escaped(joined)}%", escape="\\"))
        if joined != needle or PHRASE_JOIN in needle:  # the text itself decides
            query = query.where(func.strpos(SEARCH.c.body, needle) > 0)
    if short:
        query = query.where(SEARCH.c.grams.contains(sorted(set(short))))
    if needles.words:
        query = query.where(SEARCH.c.words.contains(list(needles.words)))
    return query.where(*_starting(needles.starts))


def _starting(starts: Iterable[str], words: Any = SEARCH.c.words) -> list[ColumnElement[bool]]:
    """Each start begins one of the row's words: its words as one space-led string, read
    row by row (the rows are few: those whose text holds every start)."""
    listed = literal(" ") + func.array_to_string(words, " ")
    return [listed.like(f"% {_like_escaped(start)}%", escape="\\") for start in starts]


# A row's word list, for the checks made row by row: one probe of report_search's key per facets
# row of the range. As a plain join, PostgreSQL with statistics (after an ANALYZE, by hand or
# by autovacuum after a bulk ingest) hashes the whole table instead: it prices a check over
# every report's text as one operator, and 1,000 probes above a sequential scan, so a range
# of 1,000 rows read all 100,000 texts (0.1 s at 10,000 reports, 1 s at 100,000). A LATERAL
# subquery with a LIMIT is never flattened into a join, so it is always the probe.
_ROW = (
    select(SEARCH.c.words)
    .where(SEARCH.c.report_id == report_facets.c.report_id)
    .limit(1)
    .lateral("searched")
)


def _in_facets(needle: str) -> ColumnElement[bool]:
    """`needle` is in the searched text as the facets row holds it (facets.rank_texts: the
    title, the one-liner, the recommendation and the rest joined by SEP, NUL and SEP inside a
    value stored as STAND_IN). A needle holds none of those three (compile._odd), so it is
    found there exactly where it is found in `report_search.body`, which joins the same
    pieces by SEP."""
    return or_(*(func.strpos(report_facets.c[name], needle) > 0 for name in RANK_COLUMNS))


def _postgres_per_row(needles: Needles) -> ColumnElement[bool]:
    """The needles checked in each row's own text (no index): cheaper than the GIN indexes
    when only a few thousand rows are asked about and the words are common. A substring is
    looked for in the facets row's own text columns, which the row is read for anyway: the
    same check on `report_search.body` cost a probe of its key and the decompression of its
    text per row, 1.5 to 3 times the time (`权重` over 1,000 rows: 9.7 ms against 3.4 ms).
    The word lists are joined to the facets row (`searched`), not asked for
    in a subquery: under OR, PostgreSQL may answer a correlated subquery by checking every
    report once, in any range."""
    checks = [_in_facets(text) for text in needles.texts]
    if needles.words:
        checks.append(_ROW.c.words.contains(list(needles.words)))
    return and_(*checks, *_starting(needles.starts, _ROW.c.words))


def searched(dialect: str, *, per_row: bool = False) -> FromClause:
    """What a condition from `holding` reads: the facets rows, joined to their word lists
    (`_ROW`) where PostgreSQL checks words row by row."""
    if dialect == "sqlite" or not per_row:
        return report_facets
    return report_facets.join(_ROW, true())


def holding(
    dialect: str, needles: Needles, *, seqs: Seqs | None = None, per_row: bool = False
) -> ColumnElement[bool]:
    """A condition on `report_facets`: the report's text holds every needle, each within one
    field. `seqs`: only rows whose seq is in this range are asked about (SQLite reads only
    their postings); `per_row` (PostgreSQL): check each row's text instead of the indexes, in
    a statement that reads `searched(per_row=True)`."""
    if dialect == "sqlite":
        return report_facets.c.seq.in_(_sqlite_rows(needles, seqs))
    if per_row:
        return _postgres_per_row(needles)
    return report_facets.c.report_id.in_(_postgres_rows(needles))
