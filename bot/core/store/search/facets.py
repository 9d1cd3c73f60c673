"""A report's facets: what the query language's field terms read, as one `report_facets` row.

Each value is the report's field as the evaluator (query/evaluate.py) compares it, so a term
compiled to SQL (search/compile.py) asks exactly what `matches` asks:
- lists (tags, risk flags, key-file paths and their last parts, symbols and their dotted
  parts) are joined by SEP and wrapped in it, so `instr(tags, SEP || 'rollout' || SEP)` is
  "has the tag rollout" and a flag's substring never spans two flags;
- levels are their rank in IMPACT_ORDER or REC_ORDER;
- `at` is merged_at, else when the store first saw the report (what `since:` reads and
  ranking's "newest" orders by).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, insert

from bot.core.query.reading import (
    file_paths,
    list_texts,
    risk_texts,
    symbol_names,
    symbol_parts,
    tag_text,
)
from bot.core.query.text import SEP, TEXT_FIELDS, normalize_text
from bot.core.query.values import IMPACT_ORDER, REC_ORDER, as_utc
from bot.core.reports.model import Report
from bot.core.store.sql.tables import report_facets

# Stored in place of NUL (PostgreSQL text refuses it) and of SEP inside a value (a raw path or
# symbol is not whitespace-normalized). One character for one, so a substring test of a value
# without these three characters answers as it would on the original.
STAND_IN = "\x1e"
UNSTORABLE = ("\x00", SEP, STAND_IN)


def storable(value: str) -> str:
    return value.replace("\x00", STAND_IN).replace(SEP, STAND_IN)


def wrap(values: Iterable[str]) -> str:
    """`\\x1fa\\x1fb\\x1f`: each value findable whole as SEP + value + SEP (an empty value
    too: SEP SEP); no values: ''."""
    kept = list(dict.fromkeys(storable(value) for value in values))
    return SEP + SEP.join(kept) + SEP if kept else ""


def _rank(order: tuple[str, ...], level: str | None) -> int | None:
    return order.index(level) if level is not None and level in order else None


# The searched fields ranking counts apart (search/relevance.FIELDS); the others are `details`.
_RANKED_APART = ("title", "summary", "recommendation")
RANK_COLUMNS = (*_RANKED_APART, "details")


def rank_texts(report: Report) -> tuple[str, str, str, str]:
    """The title, one-liner, recommendation and the rest of the searched text (the other text
    fields, the related-PR lines and the key files' notes, joined by SEP), normalized and
    storable: what relevance.FIELDS reads, as stored in the facets row."""
    title, summary, recommendation = (
        storable(normalize_text(getattr(report, name))) for name in _RANKED_APART
    )
    others = (name for name in TEXT_FIELDS if name not in _RANKED_APART)
    rest = [storable(normalize_text(getattr(report, name))) for name in others]
    rest += [text.replace("\x00", STAND_IN) for text in list_texts(report).values()]
    return title, summary, recommendation, SEP.join(rest)


def facet_row(row_id: int, seq: int, seen_at: datetime, report: Report) -> dict[str, Any]:
    paths = file_paths(report)
    symbols = symbol_names(report)
    return {
        "report_id": row_id,
        "seq": seq,
        "at": as_utc(report.merged_at) if report.merged_at is not None else seen_at,
        "number": report.number,
        "repo": report.repo.lower(),
        "impact": _rank(IMPACT_ORDER, report.impact_level),
        "rec": _rank(REC_ORDER, report.recommendation_level),
        "tags": wrap(tag_text(tag) for tag in report.tags),
        "risks": wrap(risk_texts(report)),
        "files": wrap(paths),
        "names": wrap(path.rsplit("/", 1)[-1] for path in paths),
        "symbols": wrap([*symbols, *(part for name in symbols for part in symbol_parts(name))]),
        **dict(zip(RANK_COLUMNS, rank_texts(report), strict=True)),
    }


def write_facets(conn: Connection, rows: Sequence[tuple[int, int, datetime, Report]]) -> None:
    """(Re)write the facets of these reports: (reports.id, seq, first seen, report)."""
    conn.execute(delete(report_facets).where(report_facets.c.report_id.in_([r[0] for r in rows])))
    conn.execute(insert(report_facets), [facet_row(*row) for row in rows])
