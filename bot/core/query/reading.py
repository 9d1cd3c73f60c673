"""How field terms read a report: one definition for the evaluator (evaluate.py) and for the
store's facets (store/search/facets.py), so an indexed answer is the evaluator's answer."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from bot.core.query.text import SEP, normalize_text
from bot.core.reports.model import Report
from bot.core.reports.tags import Glob, compile_glob, glob_matches, normalise_path

SYMBOL_PARTS: Final = re.compile(r"\.|::")
GLOB_FUNCTION: Final = "prdigest_glob"  # glob_holds, as the store's SQLite connections know it


def tag_text(tag: str) -> str:
    """A tag as `tag:` terms compare it (and as a bare word is an exact tag hit)."""
    return normalize_text(tag)


def risk_texts(report: Report) -> list[str]:
    """The report's risk flags, normalized; blank flags do not count."""
    return [normalize_text(flag) for flag in report.risk_flags if flag.strip()]


# Searched besides the text fields (text.TEXT_FIELDS): the related-PR lines (关联脉络, each
# as "title: relation") and the key files' notes, in this order. Each line is normalized on
# its own and the lines are joined by SEP, so a phrase never runs from one line into the next.
LIST_FIELDS: Final = ("related", "key_files")


def list_texts(report: Report) -> dict[str, str]:
    """The normalized text of each of LIST_FIELDS ('' for an empty list)."""
    related = [f"{item.title}: {item.relation}" for item in report.related]
    notes = [key_file.note for key_file in report.key_files]
    return {"related": _lines(related), "key_files": _lines(notes)}


def _lines(lines: list[str]) -> str:
    kept = (normalize_text(line) for line in lines if line.strip())
    return SEP.join(line for line in kept if line)


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


def glob_text(value: str) -> str:
    """A `file:` pattern as the glob it means over a whole key-file path (lowercased,
    normalized like a path), with CODEOWNERS' and gitignore's rules:
    - without a `/` (a trailing one aside) it matches any part of the path, directories
      included: `*rollout*` is `**/*rollout*/**` and finds `verl/workers/rollout/x.py`;
    - with one at the start or in the middle it is anchored at the repo root
      (`/setup.py`, `verl/workers`);
    - what it matches, it matches with everything inside: `verl/workers` is `verl/workers/**`;
    - a trailing `/` matches directories only: `rollout/` is `**/rollout/*/**`;
    - `**` is any number of directories; a trailing `/**` is what is inside (`a/**` is
      `a/*/**`, not the file `a`).
    The glob is matched by tags.glob_matches (linear time) and by glob_regex, the same."""
    lowered = value.lower().strip().replace("\\", "/")
    anchored = "/" in lowered.rstrip("/")
    directory = lowered.endswith("/")
    core = normalise_path(lowered).strip("/")
    if not core:
        return "**"
    head = "" if anchored else "**/"
    if directory or core == "**" or core.endswith("/**"):  # something inside: `a/**` is not `a`
        core = core.removesuffix("**").removesuffix("/") or "**"
        return f"{head}{core}/*/**" if core != "**" else "*/**"
    return f"{head}{core}/**"


def glob_literal(value: str) -> tuple[str, bool, bool] | None:
    """A pattern without wildcards as (its path, anchored, directories only), for the
    store's substring tests; None when it holds `*` or `?`."""
    lowered = value.lower().strip().replace("\\", "/")
    core = normalise_path(lowered).strip("/")
    if not core or "*" in core or "?" in core:
        return None
    return core, "/" in lowered.rstrip("/"), lowered.endswith("/")


@lru_cache(maxsize=256)
def compiled_glob(value: str) -> Glob:
    """`glob_text(value)` compiled for `glob_matches` over a path's parts."""
    return compile_glob(glob_text(value))


def glob_holds(glob: str, joined: str | None) -> bool:
    """Whether a path among `joined` (SEP-wrapped, as the store's facets keep key-file paths)
    matches the glob (a glob_text): SQLite's GLOB_FUNCTION."""
    if not joined:
        return False
    compiled = _compiled(glob)
    return any(glob_matches(compiled, path.split("/")) for path in joined[1:-1].split(SEP))


@lru_cache(maxsize=256)
def _compiled(glob: str) -> Glob:
    return compile_glob(glob)


_NOT_SEGMENT: Final = f"[^/{SEP}]"


def glob_regex(glob: str) -> str:
    """A normalized glob as a PostgreSQL regular expression over SEP-wrapped paths, matching
    what `glob_matches` matches: `*` and `?` stay within a segment, a `**` segment stands for
    any run of segments (none too). Literal characters are escaped, so the expression holds
    no user syntax; PostgreSQL's engine does not backtrack on `(?:x*/)*`."""
    segments: list[str | None] = []
    for part in glob.split("/"):
        if part != "**":
            segments.append(part)
        elif not segments or segments[-1] is not None:
            segments.append(None)
    out: list[str] = []
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment is None:
            if index == 0:
                out.append(f"[^{SEP}]*" if index == last else f"(?:{_NOT_SEGMENT}*/)*")
            else:
                out.append(f"(?:/{_NOT_SEGMENT}*)*" if index == last else f"/(?:{_NOT_SEGMENT}*/)*")
            continue
        if index > 0 and segments[index - 1] is not None:
            out.append("/")
        pieces = segment.split("*")
        out.append(f"{_NOT_SEGMENT}*".join(_piece_regex(piece) for piece in pieces))
    return f"{SEP}{''.join(out)}{SEP}"


def _piece_regex(piece: str) -> str:
    return _NOT_SEGMENT.join(_ESCAPE.sub(r"\\\g<0>", part) for part in piece.split("?"))


_ESCAPE: Final = re.compile(r"[^0-9A-Za-z]")
