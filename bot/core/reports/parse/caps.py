"""Length caps on report fields, applied at parse time to Markdown and JSON reports alike.

A report is input from outside; a 2 MB summary is no summary, and every later step (store,
digest, `/pr`) pays for it. A field over its cap is kept, cut to the cap with a closing "…"
(lists: their first items), and the parse result names the field and the cap in a warning.
The caps are generous: a real report (tests/data/003_*) is about 12 KB in all, its longest
section about 4 KB, its code snippets under 3 KB each.
"""

from __future__ import annotations

from typing import Any

from bot.core.reports.parse.lines import WarningLog

ELLIPSIS = "…"

TITLE_MAX = 300  # a GitHub PR title is at most 256
URL_MAX = 2000
SUMMARY_MAX = 2_000  # the one-liner
RECOMMENDATION_MAX = 8_000
LONG_TEXT_MAX = 64_000  # motivation, implementation, comment highlights, risks, impact
LIST_ITEM_MAX = 200  # one risk flag, key symbol, tag, or a key file's module/category/kind
PATH_MAX = 500
NOTE_MAX = 4_000  # a key file's or a snippet's note, a related PR's relation
CODE_MAX = 32_000  # one snippet's code
LANGUAGE_MAX = 32
KEY_FILES_MAX = 200
KEY_SYMBOLS_MAX = 200
SNIPPETS_MAX = 50
RELATED_MAX = 100
RISK_FLAGS_MAX = 50
TAGS_MAX = 50
SYMBOLS_PER_FILE_MAX = 50

TEXT_CAPS: dict[str, int] = {
    "title": TITLE_MAX,
    "url": URL_MAX,
    "summary": SUMMARY_MAX,
    "recommendation": RECOMMENDATION_MAX,
    "motivation": LONG_TEXT_MAX,
    "implementation": LONG_TEXT_MAX,
    "comment_highlights": LONG_TEXT_MAX,
    "risks": LONG_TEXT_MAX,
    "impact": LONG_TEXT_MAX,
}
# list field → (most items, cap of each string item)
STRING_LIST_CAPS: dict[str, tuple[int, int]] = {
    "key_symbols": (KEY_SYMBOLS_MAX, LIST_ITEM_MAX),
    "risk_flags": (RISK_FLAGS_MAX, LIST_ITEM_MAX),
    "tags": (TAGS_MAX, LIST_ITEM_MAX),
}
# list of parts → (most items, {part field → cap})
PART_CAPS: dict[str, tuple[int, dict[str, int]]] = {
    "key_files": (
        KEY_FILES_MAX,
        {
            "path": PATH_MAX,
            "module": LIST_ITEM_MAX,
            "category": LIST_ITEM_MAX,
            "kind": LIST_ITEM_MAX,
            "note": NOTE_MAX,
        },
    ),
    "snippets": (
        SNIPPETS_MAX,
        {"path": PATH_MAX, "note": NOTE_MAX, "language": LANGUAGE_MAX, "code": CODE_MAX},
    ),
    "related": (RELATED_MAX, {"title": TITLE_MAX, "relation": NOTE_MAX}),
}


def cut(text: str, cap: int) -> str:
    """`text` cut to `cap` characters, the last one "…"."""
    return text if len(text) <= cap else text[: cap - 1] + ELLIPSIS


def _capped_text(value: Any, name: str, cap: int, log: WarningLog) -> Any:
    if isinstance(value, str) and len(value) > cap:
        log.add(f"{name} is longer than {cap} characters: cut to {cap}, ending with …")
        return cut(value, cap)
    return value


def _capped_list(value: Any, name: str, most: int, log: WarningLog) -> Any:
    if isinstance(value, list) and len(value) > most:
        log.add(f"{name} has more than {most} items: the first {most} kept")
        return value[:most]
    return value


def _capped_part(item: Any, where: str, caps: dict[str, int], log: WarningLog) -> Any:
    if not isinstance(item, dict):
        return item  # pydantic names the wrong type
    capped = dict(item)
    for key, cap in caps.items():
        if key in capped:
            capped[key] = _capped_text(capped[key], f"{where}.{key}", cap, log)
    if "symbols" in item:
        symbols = _capped_list(item["symbols"], f"{where}.symbols", SYMBOLS_PER_FILE_MAX, log)
        capped["symbols"] = _capped_items(symbols, f"{where}.symbols", LIST_ITEM_MAX, log)
    return capped


def _capped_items(value: Any, name: str, cap: int, log: WarningLog) -> Any:
    if not isinstance(value, list):
        return value
    return [_capped_text(item, f"{name}.{index}", cap, log) for index, item in enumerate(value)]


def cap_fields(fields: dict[str, Any], log: WarningLog) -> dict[str, Any]:
    """The report's raw fields with every one over its cap cut, each cut warned by name."""
    capped = dict(fields)
    for name, cap in TEXT_CAPS.items():
        if name in capped:
            capped[name] = _capped_text(capped[name], name, cap, log)
    for name, (most, cap) in STRING_LIST_CAPS.items():
        if name in capped:
            items = _capped_list(capped[name], name, most, log)
            capped[name] = _capped_items(items, name, cap, log)
    for name, (most, caps) in PART_CAPS.items():
        if name in capped:
            parts = _capped_list(capped[name], name, most, log)
            if isinstance(parts, list):
                parts = [
                    _capped_part(item, f"{name}.{index}", caps, log)
                    for index, item in enumerate(parts)
                ]
            capped[name] = parts
    return capped
