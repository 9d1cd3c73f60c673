"""How relevant a report is to a query's words: where each is, then BM25F over four fields,
in SQL and in Python.

A word scores its place, the best field that holds it (FIELDS: the title and the one-liner 3,
the recommendation 2, the rest of the searched text 1: the long sections, the related-PR
lines and the key files' notes, `details`), plus how often it is there, below 1: its
occurrences in every field, each count weighted by the field (FIELDS) and divided by how long
the field is against a typical one, then saturated (BM25F, Robertson and Zaragoza):

    x = Σ weight · count / (1 - B + B · length / typical)      share = x / (K1 + x)

and a report's relevance is the sum of its words' places plus the mean of their shares (below
1, so the database can rank by the places alone and count only the reports that can be first).

So a word in the one-liner outranks the same word written five times in a long section, and
among reports that hold it in the same place, one that says it more often, in less text,
ranks first. A word is counted as a substring of the normalized text (so 权重 is counted in
权重同步), and Chinese ranks as English does. Every word of the query weighs the same: the
window a search ranks (the newest 1,000 matches) holds every word of an AND query, so a
document frequency over it would not tell them apart.

The same formula is written twice, once as SQL over `report_facets` (the database orders a
range of matches by it and reads only the best few) and once in Python over a report (the
checked path and the reports read back are ranked by it); `facets.rank_texts` gives both the
same text, so both give the same score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from sqlalchemy import ColumnElement, Float, FromClause, case, cast, func, literal

from bot.core.store.search.balanced import total
from bot.core.store.sql.tables import report_facets as facets

K1: Final = 2.0  # how soon more occurrences stop adding (the weights scale the counts)
B: Final = 0.75  # how much a long field is discounted
# The words whose counts make the share (the first ones): every count is a pass over the
# text, and a query of hundreds of words is ranked by their places.
COUNTED: Final = 16
# (facets column, place, weight, a typical length in characters, those of the example
# reports). The weights favour the short fields more than the places do: a word twice in the
# one-liner outweighs it twenty times in three thousand characters of sections.
FIELDS: Final = (
    ("title", 3, 5.0, 60),
    ("summary", 3, 5.0, 50),
    ("recommendation", 2, 3.0, 150),
    ("details", 1, 1.0, 1500),
)


def _frequency(texts: Sequence[str], word: str) -> tuple[int, float]:
    """A word's place in a report whose FIELDS texts are `texts`, and its saturated BM25F."""
    x = 0.0
    place = 0
    for text, (_, at, weight, typical) in zip(texts, FIELDS, strict=True):
        count = text.count(word)
        if count:
            place = max(place, at)
            x += weight * count / (1 - B + B * len(text) / typical)
    return place, 1 - K1 / (K1 + x)


def relevance(texts: Sequence[str], words: Sequence[str]) -> float:
    """The report's relevance to these words (each normalized, none empty): the sum of their
    places, plus the mean of their saturated counts (below 1, so a place is never outweighed)."""
    if not words:
        return 0.0
    found = [_frequency(texts, word) for word in words]
    shares = [share for _, share in found[:COUNTED]]
    return sum(place for place, _ in found) + sum(shares) / len(shares)


Has = Callable[[Any, str], ColumnElement[bool]]


def sql_places(words: Sequence[str], has: Has) -> ColumnElement[Any]:
    """The sum of the words' places (an integer) over a facets row; `has`: the dialect's
    substring test."""
    best = sorted(FIELDS, key=lambda field: -field[1])
    places = [
        case(*[(has(facets.c[name], word), at) for name, at, _, _ in best], else_=0)
        for word in words
    ]
    return total(places) if places else literal(0)


def _count(dialect: str, column: Any, word: str) -> ColumnElement[Any]:
    """How many times `word` is in `column` (non-overlapping, as str.count counts). PostgreSQL
    counts bytes: octet_length reads a stored value's size without decompressing it, and
    length counts the characters of a UTF-8 text one by one."""
    if dialect == "sqlite":
        size, unit = func.length, len(word)
    else:
        size, unit = func.octet_length, len(word.encode())
    removed = size(column) - size(func.replace(column, literal(word), literal("")))
    return cast(removed, Float) / unit


def sql_frequency(words: Sequence[str], dialect: str, row: FromClause) -> ColumnElement[Any]:
    """The mean of the words' saturated counts over `row` (report_facets or an alias of it)."""
    shares: list[ColumnElement[Any]] = []
    for word in words[:COUNTED]:
        parts: list[ColumnElement[Any]] = []
        for name, _, weight, typical in FIELDS:
            column = row.c[name]
            norm = literal(1 - B) + literal(B / typical) * cast(func.length(column), Float)
            parts.append(literal(float(weight)) * _count(dialect, column, word) / norm)
        shares.append(literal(1.0) - literal(K1) / (literal(K1) + total(parts)))
    if not shares:
        return literal(0.0)
    mean: ColumnElement[Any] = total(shares) / float(len(shares))
    return mean
