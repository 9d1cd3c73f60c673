"""A query as SQL over `report_facets` and the text index: the condition and the ranking.

`compile_query` turns each term into a condition on the facets row (facets.py) that asks what
the evaluator asks (query/evaluate.py), so the database counts and orders the matches and
only the best few reports are ever read. A field term is compiled by FIELD_SQL, keyed by the
query language's table of fields (query/fields.py) and checked against it on import; a name
that is no field raises FieldTableError. A `file:` glob with a wildcard is matched by the
evaluator's own glob matcher (SQLite: a function on the connection; PostgreSQL: the glob as an
escaped regular expression, reading/glob_regex), after the paths are narrowed to those that
hold the glob's longest literal piece. A term that SQL cannot ask exactly gives a superset and
marks the result inexact; the caller then checks each candidate with `matches`:
- a word or value holding NUL, SEP or STAND_IN (facets.py stores NUL differently);
- a phrase or word that is not one run of word characters but has a word character at an
  edge (`"rollout ci"`, `v0.5`): the index finds the text and each of its whole words, not
  that they are the same place (`_needles`);
- NOT of an inexact term asks nothing (any report may match).
A word of word characters alone (`ci`, `fp8`, `roll*`) is asked of the word lists, exactly;
one whose edges are not word characters (`权重`, `#1`) as a substring.
Long AND and OR runs and the rank's sum are balanced trees (balanced.py), so no statement is
deeper than SQLite parses, however many terms a query has.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import (
    ColumnElement,
    FromClause,
    and_,
    case,
    false,
    func,
    literal,
    not_,
    or_,
    true,
)

from bot.core.query.ast import And, Field, Not, Query, Text
from bot.core.query.fields import check_covers, for_field
from bot.core.query.reading import GLOB_FUNCTION, glob_literal, glob_regex, glob_text
from bot.core.query.text import SEP, WORD_RUN, is_one_word, is_word_char
from bot.core.query.values import (
    COMPARE,
    IMPACT_ORDER,
    REC_ORDER,
    as_utc,
    number_bounds,
    time_bound,
)
from bot.core.store.search.balanced import all_of, any_of, total
from bot.core.store.search.facets import UNSTORABLE
from bot.core.store.search.relevance import sql_frequency, sql_places
from bot.core.store.search.text_lookup import Needles, Seqs, holding
from bot.core.store.sql.tables import report_facets as facets

EXACT_SCORE: Final = 100  # one exact hit (number, tag, title) outranks any relevance
_PIECE_ENDS: Final = re.compile(r"[*?/]")


@dataclass(frozen=True, slots=True)
class Compiled:
    """`where` (None: every report) is the query's answer when `exact`, else a superset."""

    where: ColumnElement[bool] | None
    exact: bool


@dataclass(frozen=True, slots=True)
class RankTerms:
    """What a query ranks by (core/store/finder/search.py reads them off the query)."""

    words: tuple[str, ...]  # positive words, each scored where found
    numbers: frozenset[int]  # PR numbers named exactly
    tags: frozenset[str]  # `tag:` terms asked for
    all_words: tuple[str, ...]  # words every match holds (ANDed at the top)

    @property
    def scored(self) -> bool:
        """Whether any report can score above 0 (else the rank is newest first)."""
        return bool(self.words or self.numbers or self.tags or self.all_words)


def _has(dialect: str, column: Any, needle: str) -> ColumnElement[bool]:
    """`needle` is a substring of `column` (instr/strpos: no pattern characters)."""
    position = func.instr if dialect == "sqlite" else func.strpos
    return position(column, literal(needle)) > 0


class _Compiler:
    def __init__(self, dialect: str, now: datetime, seqs: Seqs | None, per_row: bool) -> None:
        self.dialect = dialect
        self.now = as_utc(now)
        self.seqs = seqs
        self.per_row = per_row

    def has(self, column: Any, needle: str) -> ColumnElement[bool]:
        return _has(self.dialect, column, needle)

    def holding(self, needles: Needles) -> ColumnElement[bool]:
        return holding(self.dialect, needles, seqs=self.seqs, per_row=self.per_row)

    def compile(self, query: Query) -> Compiled:
        if isinstance(query, Text):
            if not query.value:  # the empty phrase is in every report
                return Compiled(None, True)
            if _odd(query.value):
                return Compiled(None, False)
            needles, exact = _needles(query)
            return Compiled(self.holding(needles), exact)
        if isinstance(query, Field):
            return self.field(query)
        if isinstance(query, Not):
            inner = self.compile(query.item)
            if not inner.exact:
                return Compiled(None, False)
            return Compiled(false() if inner.where is None else not_(inner.where), True)
        if isinstance(query, And):
            return self.conjunction(query.items)
        parts = [self.compile(item) for item in query.items]
        exact = all(part.exact for part in parts)
        if any(part.where is None for part in parts):
            return Compiled(None, exact)
        return Compiled(any_of([part.where for part in parts if part.where is not None]), exact)

    def conjunction(self, items: Iterable[Query]) -> Compiled:
        words = [i for i in items if isinstance(i, Text) and i.value and not _odd(i.value)]
        parts = [self.compile(i) for i in items if i not in words]
        if words:  # one trip to the index for every word ANDed here
            asked = [_needles(word) for word in words]
            needles = sum((one for one, _ in asked), Needles())
            parts.append(Compiled(self.holding(needles), all(exact for _, exact in asked)))
        conditions = [part.where for part in parts if part.where is not None]
        where = None if not conditions else all_of(conditions)
        return Compiled(where, all(part.exact for part in parts))

    def field(self, term: Field) -> Compiled:
        compiled = for_field(FIELD_SQL, term.name)  # an unknown field raises, whatever its value
        if _odd(term.value):
            return Compiled(None, False)
        return compiled(self, term)


def _tag(compiler: _Compiler, term: Field) -> Compiled:
    return Compiled(compiler.has(facets.c.tags, SEP + term.value + SEP), True)


def _repo(_: _Compiler, term: Field) -> Compiled:
    value = term.value
    if "/" in value:
        return Compiled(facets.c.repo == value, True)
    return Compiled(or_(facets.c.repo == value, _ends_with(facets.c.repo, value)), True)


def _risk(compiler: _Compiler, term: Field) -> Compiled:
    if term.value == "*":
        return Compiled(facets.c.risks != "", True)
    return Compiled(compiler.has(facets.c.risks, term.value), True)


def _impact(_: _Compiler, term: Field) -> Compiled:
    return Compiled(_level(facets.c.impact, term.op, IMPACT_ORDER, term.value), True)


def _rec(_: _Compiler, term: Field) -> Compiled:
    return Compiled(_level(facets.c.rec, term.op, REC_ORDER, term.value), True)


def _number(_: _Compiler, term: Field) -> Compiled:
    low, high = number_bounds(term.op, term.value)
    if low is not None and low == high:  # equality: the index on number answers it
        return Compiled(facets.c.number == low, True)
    bounds = [facets.c.number >= low] if low is not None else []
    bounds += [facets.c.number <= high] if high is not None else []
    return Compiled(and_(true(), *bounds), True)


def _since(compiler: _Compiler, term: Field) -> Compiled:
    return Compiled(facets.c.at >= time_bound(term.value, compiler.now), True)


def _before(compiler: _Compiler, term: Field) -> Compiled:
    return Compiled(facets.c.at < time_bound(term.value, compiler.now), True)


def _symbol(compiler: _Compiler, term: Field) -> Compiled:
    return Compiled(compiler.has(facets.c.symbols, SEP + term.value.casefold() + SEP), True)


def _file(compiler: _Compiler, term: Field) -> Compiled:
    """Over the key-file paths (`files`), as reading.glob_text reads the pattern."""
    column = facets.c.files
    literal_ = glob_literal(term.value)
    if literal_ is not None:  # substring tests: the path, or a run of its parts
        return Compiled(
            any_of([compiler.has(column, n) for n in _literal_needles(*literal_)]), True
        )
    glob = glob_text(term.value)
    # The longest literal piece of one part first (cheap, narrows; a `/` is no piece: a
    # `**` beside it may stand for no directory), then the glob itself.
    piece = max(_PIECE_ENDS.split(glob), key=len)
    narrow = [compiler.has(column, piece)] if piece else []
    if compiler.dialect == "sqlite":
        exact = getattr(func, GLOB_FUNCTION)(glob, column) == 1
    else:
        exact = column.regexp_match(glob_regex(glob))
    return Compiled(and_(*narrow, exact), True)


# The condition each field of the table (query/fields.py) asks of a facets row, as
# query/evaluate.py's test of the same field asks it of the report: every field, no other.
FIELD_SQL: Final[dict[str, Callable[[_Compiler, Field], Compiled]]] = {
    "tag": _tag,
    "repo": _repo,
    "risk": _risk,
    "impact": _impact,
    "rec": _rec,
    "number": _number,
    "file": _file,
    "symbol": _symbol,
    "since": _since,
    "before": _before,
}
check_covers("the SQL compiler (compile.FIELD_SQL)", FIELD_SQL)


def _needles(term: Text) -> tuple[Needles, bool]:
    """What the index asks for a word or phrase (value not empty, storable), and whether
    that is exactly text.contains: a run of word characters is a whole word (or a word's
    start), a needle without word-character edges a substring; any other holds the
    substring and each of its runs of word characters as whole words (the last as a start
    after `*`), which is not enough to say they are found at one place."""
    value = term.value
    if is_one_word(value):
        return (Needles(starts=(value,)) if term.prefix else Needles(words=(value,))), True
    bounded = is_word_char(value[0]) or (not term.prefix and is_word_char(value[-1]))
    if not bounded:
        return Needles(texts=(value,)), True
    runs = WORD_RUN.findall(value)
    open_end = term.prefix and is_word_char(value[-1])
    whole = runs[:-1] if open_end else runs
    starts = runs[-1:] if open_end else []
    return Needles(texts=(value,), words=tuple(whole), starts=tuple(starts)), False


def _literal_needles(path: str, anchored: bool, directory: bool) -> list[str]:
    """What a SEP-wrapped path list holds when a path matches a pattern without wildcards:
    anchored, the path itself or a path below it; else also a run of parts inside a path.
    Directories only: always something below."""
    starts = [SEP] if anchored else [SEP, "/"]
    ends = ["/"] if directory else ["/", SEP]
    return [start + path + end for start in starts for end in ends]


def _odd(value: str) -> bool:
    """A value SQL cannot answer exactly: the index and the facets store NUL in its place."""
    return any(char in value for char in UNSTORABLE)


def _ends_with(column: Any, name: str) -> ColumnElement[bool]:
    suffix = "/" + name
    return func.substr(column, func.length(column) - len(suffix) + 1) == suffix


def _level(column: Any, op: str, order: tuple[str, ...], value: str) -> ColumnElement[bool]:
    return and_(column.is_not(None), COMPARE[op](column, order.index(value)))


def compile_query(
    query: Query,
    *,
    dialect: str,
    now: datetime,
    seqs: Seqs | None = None,
    per_row: bool = False,
) -> Compiled:
    """The SQL form of `query` over `report_facets` (time terms count back from `now`), for
    rows whose seq is within `seqs` (None: any); `per_row`: see text_index.holding."""
    return _Compiler(dialect, now, seqs, per_row).compile(query)


def score(terms: RankTerms, *, dialect: str) -> ColumnElement[Any]:
    """The coarse rank of a facets row, an integer: EXACT_SCORE per exact hit (number, tag,
    title), plus each word's place (relevance.py). finder/rank.py's Ranker adds the words'
    counts, below 1 (`frequency`), to the same figure."""

    def has(column: Any, needle: str) -> ColumnElement[bool]:
        return _has(dialect, column, needle)

    hits: list[ColumnElement[bool]] = []
    if terms.numbers:
        hits.append(facets.c.number.in_(sorted(terms.numbers)))
    tag_values = sorted({*terms.words, *terms.tags} - {""})
    if tag_values:
        hits.append(any_of([has(facets.c.tags, SEP + tag + SEP) for tag in tag_values]))
    if terms.all_words:
        hits.append(all_of([has(facets.c.title, word) for word in terms.all_words]))
    parts: list[ColumnElement[Any]] = [literal(0)]
    parts += [case((hit, EXACT_SCORE), else_=0) for hit in hits]
    parts.append(sql_places(ranked_words(terms.words), has))
    return total(parts)


def frequency(terms: RankTerms, *, dialect: str, row: FromClause) -> ColumnElement[Any]:
    """The rest of the rank, below 1: how often the words are in `row` (a facets row)."""
    return sql_frequency(ranked_words(terms.words), dialect, row)


def ranked_words(words: Iterable[str]) -> list[str]:
    """The words relevance counts: none empty, none SQL cannot store (`_odd`)."""
    return [word for word in words if word and not _odd(word)]
