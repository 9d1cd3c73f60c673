"""Search in the store: the full-text index (text_index.py writes it, text_lookup.py reads
it), the facets the field terms read (facets.py), a query compiled to SQL over both
(compile.py), and how relevant a report is to its words (relevance.py).

Both are written in the transaction that writes the report (ReportStore), filled by the
migrations that create them, and rebuilt by `prdigest migrate`.
"""

from bot.core.store.search.compile import Compiled, RankTerms, compile_query, frequency, score
from bot.core.store.search.text_index import (
    SQLITE_DROP,
    SQLITE_SCHEMA,
    field_texts,
    fill_index,
    index_reports,
    rebuild_index,
)

__all__ = [
    "SQLITE_DROP",
    "SQLITE_SCHEMA",
    "Compiled",
    "RankTerms",
    "compile_query",
    "field_texts",
    "fill_index",
    "frequency",
    "index_reports",
    "rebuild_index",
    "score",
]
