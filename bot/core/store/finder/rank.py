"""How a search ranks its hits (search.py): exact hits, then relevance (BM25F over where
each word is and how often: store/search/relevance.py), then newest.

The Ranker scores a report as store/search/compile.score scores its facets row: the exact path
orders by that in SQL, then this ranks the few reports read; the checked path ranks with it
alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from bot.core.query import And, Field, Or, Query, Text, normalize_text, text_needles
from bot.core.query.reading import tag_text
from bot.core.query.values import as_utc
from bot.core.reports.model import Report
from bot.core.store.search import RankTerms
from bot.core.store.search.compile import EXACT_SCORE, ranked_words
from bot.core.store.search.facets import rank_texts
from bot.core.store.search.relevance import relevance as word_relevance

EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Hit:
    """One matching report, with its score and why it ranks where it does."""

    report: Report
    score: float
    seq: int
    exact: tuple[str, ...] = ()  # "number", "tag", "title": the exact hits, if any
    seen_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Ranker:
    """Scores a report as compile.score scores its facets row (the exact path orders by that,
    then this ranks the few reports read)."""

    terms: RankTerms

    def rank(self, report: Report, seq: int, seen_at: datetime | None) -> Hit:
        terms = self.terms
        exact: list[str] = []
        if report.number in terms.numbers:
            exact.append("number")
        tags = {tag_text(tag) for tag in report.tags}
        if not tags.isdisjoint(terms.words) or not tags.isdisjoint(terms.tags):
            exact.append("tag")
        title = normalize_text(report.title)
        if terms.all_words and all(word in title for word in terms.all_words):
            exact.append("title")
        relevance = word_relevance(rank_texts(report), ranked_words(terms.words))
        score = float(EXACT_SCORE * len(exact) + relevance)
        return Hit(report, score, seq, tuple(exact), seen_at)


def _positive_terms(query: Query) -> Iterator[Text | Field]:
    """The words and fields the query asks for (none under NOT)."""
    if isinstance(query, Text | Field):
        yield query
    elif isinstance(query, And | Or):
        for item in query.items:
            yield from _positive_terms(item)


def make_ranker(query: Query) -> Ranker:
    words: list[str] = []
    numbers: set[int] = set()
    tags: set[str] = set()
    for term in _positive_terms(query):
        if isinstance(term, Text):
            words.append(term.value)
            if term.value.isdigit() and len(term.value) <= 10:
                numbers.add(int(term.value))
        elif term.name == "number" and term.op == ":" and ".." not in term.value:
            numbers.add(int(term.value))
        elif term.name == "tag":
            tags.add(term.value)
    return Ranker(
        RankTerms(
            tuple(dict.fromkeys(words)),
            frozenset(numbers),
            frozenset(tags),
            tuple(text_needles(query)),
        )
    )


def sort_key(hit: Hit) -> tuple[float, float, int]:
    moment = hit.report.merged_at or hit.seen_at
    when = (as_utc(moment) - EPOCH).total_seconds() if moment is not None else float("-inf")
    return (hit.score, when, hit.seq)
