"""Report files → Report: the Markdown review format (Chinese headings) and JSON.

The parser is tolerant: what it cannot read is skipped and reported as a warning naming the
line, and only input that is no report at all (no PR number, no title, no repository, not
UTF-8, not a JSON object) raises NotAReportError. Derived fields (`recommendation_level`,
`impact_level`, `tags`) are computed here, so a JSON report and a Markdown report of the same
PR give the same Report.

Every field has a length cap (parse/caps.py): a report over one is kept with the field cut
("…") and a warning naming the field and the cap, for Markdown and JSON alike.

Everything is a single pass over the lines with index scans, no backtracking regexes: a 2 MB
report or pathological input (`'['*13000`, 100k bullets, one 2 MB line) parses in linear time.
The Markdown readers live in parse_lines, parse_outline, parse_header, parse_sections and
parse_items; this module is the public face.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from pydantic import BaseModel, ValidationError

from bot.core.reports.model import KeyFile, RelatedPR, Report, Snippet
from bot.core.reports.parse.caps import cap_fields
from bot.core.reports.parse.header import read_header
from bot.core.reports.parse.items import impact_level, pull_request_ref, recommendation_level
from bot.core.reports.parse.lines import Line, WarningLog, excerpt, join_text, split_lines
from bot.core.reports.parse.outline import SECTION_TITLES, outline
from bot.core.reports.parse.sections import (
    read_implementation,
    read_related_section,
    read_risks,
    read_snippets,
    read_summary,
    section_text,
)
from bot.core.reports.tags import TagRule, derive_tags

__all__ = [
    "NotAReportError",
    "ParseResult",
    "content_hash",
    "parse_bytes",
    "parse_file",
    "parse_json",
    "parse_markdown",
]

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".txt"})
JSON_SUFFIXES = frozenset({".json"})
NO_NUMBER = 'no PR number (expected a "# PR #N" heading or a /pull/N link)'
NO_TITLE = "no title (expected a 标题 bullet)"
NO_REPO = "no repository (expected a 仓库 bullet or an …/owner/name/pull/N link)"
# PostgreSQL refuses NUL in text and JSON columns; nothing in a report needs it.
NUL_REMOVED = "NUL characters removed"
NO_JSON_NUMBER = 'no PR number (expected a "number" key or a /pull/N "url")'
NO_JSON_TITLE = 'no title (expected a "title" key)'
NO_JSON_REPO = 'no repository (expected a "repo" key or an …/owner/name/pull/N "url")'


class NotAReportError(Exception):
    """The input is no report; `str(error)` is `source: reason`."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


@dataclass(frozen=True)
class ParseResult:
    report: Report
    warnings: list[str]  # what was skipped and where (`line 57: key file bullet not understood…`)


def parse_markdown(text: str, source: str = "<text>", rules: Sequence[TagRule] = ()) -> ParseResult:
    """A Markdown report → Report, with warnings for whatever could not be read."""
    log = WarningLog()
    if "\x00" in text:
        text = text.replace("\x00", "")
        log.add(NUL_REMOVED)
    document = outline(split_lines(text), log)
    fields = read_header(document.preamble, log)
    for key, reason in (("number", NO_NUMBER), ("title", NO_TITLE), ("repo", NO_REPO)):
        if not fields.get(key):
            raise NotAReportError(source, reason)
    for key, title in SECTION_TITLES.items():
        lines = document.sections.get(key)
        if lines is None:
            log.add(f"missing section {title}")
        else:
            fields |= _SECTION_READERS[key](lines, log)
    fields = cap_fields(fields, log)
    fields["recommendation_level"] = recommendation_level(fields.get("recommendation", ""))
    report = _validate(fields, source)
    return ParseResult(_with_tags(report, rules), log.messages())


def _read_motivation(lines: list[Line], log: WarningLog) -> dict[str, Any]:
    return {"motivation": section_text(lines)}


def _read_comments(lines: list[Line], log: WarningLog) -> dict[str, Any]:
    return {"comment_highlights": section_text(lines)}


def _read_implementation(lines: list[Line], log: WarningLog) -> dict[str, Any]:
    found = read_implementation(lines, log)
    # dicts, not KeyFile objects: Report validates the whole list in one call, much faster
    # than a model per bullet when a report has thousands of them
    key_files = [
        {
            "path": draft.path,
            "module": draft.module,
            "category": draft.category,
            "kind": draft.kind,
            "symbols": draft.symbols,
            "note": draft.full_note(),
        }
        for draft in found.key_files
    ]
    steps = join_text(found.steps)
    return {"implementation": steps, "key_files": key_files, "key_symbols": found.key_symbols}


def _read_snippets(lines: list[Line], log: WarningLog) -> dict[str, Any]:
    return {"snippets": read_snippets(lines, log)}


def _read_related(lines: list[Line], log: WarningLog) -> dict[str, Any]:
    return {"related": read_related_section(lines, log)}


_SECTION_READERS: dict[str, Callable[[list[Line], WarningLog], dict[str, Any]]] = {
    "summary": read_summary,
    "motivation": _read_motivation,
    "implementation": _read_implementation,
    "snippets": _read_snippets,
    "comments": _read_comments,
    "risks": read_risks,
    "related": _read_related,
}


def parse_json(
    data: bytes | str, source: str = "<json>", rules: Sequence[TagRule] = ()
) -> ParseResult:
    """A JSON report (the Report's keys) → Report. Unknown keys are warnings; derived fields
    that are absent are computed; `tags`, when present, are explicit tags kept with derived ones.
    """
    text = _decode(data, source) if isinstance(data, bytes) else data
    log = WarningLog()
    loaded = _load_json_object(text.removeprefix("\ufeff"), source)
    if "\\u0000" in text and _remove_nul(loaded):
        log.add(NUL_REMOVED)
    fields = cap_fields(_known_fields(loaded, log), log)
    url = fields.get("url")
    link_repo, link_number = pull_request_ref(url) if isinstance(url, str) else (None, None)
    if fields.get("repo") is None and link_repo is not None:
        fields["repo"] = link_repo
    if fields.get("number") is None and link_number is not None:
        fields["number"] = link_number
    for key, reason in (
        ("number", NO_JSON_NUMBER),
        ("title", NO_JSON_TITLE),
        ("repo", NO_JSON_REPO),
    ):
        if fields.get(key) is None or fields.get(key) == "":
            raise NotAReportError(source, reason)
    report = _validate(fields, source)
    derived: dict[str, Any] = {}
    if "recommendation_level" not in fields:
        derived["recommendation_level"] = recommendation_level(report.recommendation)
    if "impact_level" not in fields:
        derived["impact_level"] = impact_level(report.impact)
    report = report.model_copy(update=derived)
    return ParseResult(_with_tags(report, rules, explicit=report.tags), log.messages())


def _load_json_object(text: str, source: str) -> dict[str, Any]:
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError as exc:
        reason = f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        raise NotAReportError(source, reason) from exc
    except ValueError as exc:  # e.g. an integer longer than Python's 4300-digit limit
        raise NotAReportError(source, f"invalid JSON: {exc}") from exc
    except RecursionError as exc:  # `[[[[…` deeper than the decoder's recursion limit
        raise NotAReportError(source, "invalid JSON: nested too deeply") from exc
    if not isinstance(loaded, dict):
        raise NotAReportError(source, f"expected a JSON object, got {_json_kind(loaded)}")
    return loaded


def _remove_nul(loaded: dict[str, Any]) -> bool:
    """Drop NUL from every string value (in place, no recursion); True if there was one."""
    found = False
    stack: list[dict[Any, Any] | list[Any]] = [loaded]
    while stack:
        container = stack.pop()
        pairs = container.items() if isinstance(container, dict) else enumerate(container)
        for key, value in list(pairs):
            if isinstance(value, str) and "\x00" in value:
                container[key], found = value.replace("\x00", ""), True
            elif isinstance(value, dict | list):
                stack.append(value)
    return found


def _json_kind(value: object) -> str:
    kinds = {list: "an array", str: "a string", bool: "a boolean", int: "a number"}
    return "null" if value is None else kinds.get(type(value), "a number")


_PART_MODELS: dict[str, type[BaseModel]] = {
    "key_files": KeyFile,
    "snippets": Snippet,
    "related": RelatedPR,
}


def _known_fields(loaded: dict[str, Any], log: WarningLog) -> dict[str, Any]:
    """Drop (with a warning) keys the Report does not have, at the top and in its parts."""
    fields: dict[str, Any] = {}
    for key, value in loaded.items():
        if key not in Report.model_fields:
            log.add(f'unknown key "{excerpt(key)}" skipped')
            continue
        part_model = _PART_MODELS.get(key)
        if part_model is not None and isinstance(value, list):
            value = [
                _known_part_fields(item, f"{key}.{index}", part_model.model_fields, log)
                for index, item in enumerate(value)
            ]
        fields[key] = value
    return fields


def _known_part_fields(item: Any, where: str, known: dict[str, Any], log: WarningLog) -> Any:
    if not isinstance(item, dict):
        return item  # pydantic names the wrong type with its path
    for key in item.keys() - known.keys():
        log.add(f'unknown key "{where}.{excerpt(key)}" skipped')
    return {key: value for key, value in item.items() if key in known}


def _validate(fields: dict[str, Any], source: str) -> Report:
    try:
        return Report.model_validate(fields)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        first = errors[0]
        where = ".".join(str(part) for part in first["loc"]) or "report"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise NotAReportError(source, f"{where}: {first['msg']}{more}") from exc


def _with_tags(report: Report, rules: Sequence[TagRule], explicit: Sequence[str] = ()) -> Report:
    paths = [key_file.path for key_file in report.key_files]
    tags = derive_tags(report.title, paths, rules, explicit)
    return report.model_copy(update={"tags": tags})


def parse_bytes(data: bytes, source: str, rules: Sequence[TagRule] = ()) -> ParseResult:
    """By the suffix of `source` (`.json`; `.md`, `.markdown`, `.txt`), else by the content:
    a JSON report starts with `{`."""
    text = _decode(data, source)
    suffix = PurePath(source).suffix.lower()
    sniffed_json = text.lstrip("\ufeff \t\r\n").startswith("{")
    if suffix in JSON_SUFFIXES or (suffix not in MARKDOWN_SUFFIXES and sniffed_json):
        return parse_json(text, source, rules)
    return parse_markdown(text, source, rules)


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotAReportError(source, f"invalid UTF-8 at byte {exc.start}") from exc


def parse_file(path: Path, rules: Sequence[TagRule] = ()) -> ParseResult:
    """Read and parse one report file; OSError (missing, unreadable) propagates unchanged."""
    return parse_bytes(path.read_bytes(), str(path), rules)


def content_hash(report: Report) -> str:
    """sha256 hex of the report's canonical JSON: same content, same hash, on any machine."""
    canonical = json.dumps(
        report.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
