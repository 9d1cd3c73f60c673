"""How field terms read a report: one definition for the evaluator (evaluate.py) and for the
store's facets (store/search/facets.py), so an indexed answer is the evaluator's answer."""

from __future__ import annotations

import re
from typing import Final

from bot.core.query.text import normalize_text
from bot.core.reports.model import Report
from bot.core.reports.tags import normalise_path

SYMBOL_PARTS: Final = re.compile(r"\.|::")


def tag_text(tag: str) -> str:
    """A tag as `tag:` terms compare it (and as a bare word is an exact tag hit)."""
    return normalize_text(tag)


def risk_texts(report: Report) -> list[str]:
    """The report's risk flags, normalized; blank flags do not count."""
    return [normalize_text(flag) for flag in report.risk_flags if flag.strip()]


def file_paths(report: Report) -> list[str]:
    """Key-file paths, lowercased and normalized (`./a//b` is `a/b`)."""
    return [normalise_path(key_file.path.lower()) for key_file in report.key_files]


def symbol_names(report: Report) -> list[str]:
    """Every key symbol (the report's and each key file's), casefolded and trimmed."""
    symbols = [*report.key_symbols]
    for key_file in report.key_files:
        symbols.extend(key_file.symbols)
    return [symbol.strip().casefold() for symbol in symbols]


def symbol_parts(symbol: str) -> list[str]:
    """A symbol's dotted (or `::`) parts: `symbol:SGLangHttpServer` finds
    `SGLangHttpServer.__init__`."""
    return SYMBOL_PARTS.split(symbol)


def glob_text(value: str) -> tuple[str, bool]:
    """A `file:` glob as it is matched (lowercased, normalized like a path), and whether it
    is matched against a path's last part only (it has no `/`)."""
    normalised = normalise_path(value.lower())
    return normalised, "/" not in normalised
