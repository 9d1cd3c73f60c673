"""Readers for the sections of a Markdown report.

Each reader takes the section's numbered lines and a WarningLog and returns plain values for
the Report; whatever it cannot read is skipped with a warning naming the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.core.reports.parse.items import (
    KeyFileDraft,
    RelatedDraft,
    impact_level,
    level_word,
    read_key_file,
    read_related,
)
from bot.core.reports.parse.lines import (
    Line,
    WarningLog,
    closes_fence,
    excerpt,
    fence_language,
    fence_marker,
    fenced,
    is_indented,
    join_item,
    join_text,
    read_heading,
    split_label,
    split_list,
    strip_bullet,
)


@dataclass
class Item:
    line: int
    first: str
    rest: list[str] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)  # `rest` without fenced code lines

    def text(self) -> str:
        return join_item(self.first, self.rest)

    def prose_text(self) -> str:
        """For a list item (风险标记): an example in a code block is no entry of the list."""
        return join_item(self.first, self.prose)


def read_items(
    lines: list[Line], labels: Mapping[str, str], section: str, log: WarningLog
) -> dict[str, Item]:
    """Bullets (or lines) starting with a known label, each with the lines after it.

    Only a known label starts an item, so numbered sub-items and unlabelled nested bullets,
    at any indentation, stay with the item they follow.
    """
    items: dict[str, Item] = {}
    current: Item | None = None
    for number, text, code in fenced(lines):
        if not text.strip():
            continue
        bullet = strip_bullet(text)
        # a fenced `- 风险标记：x` is an example in the text, never an item of its own
        labelled = None if code else split_label(text.strip() if bullet is None else bullet)
        key = labels.get(labelled[0]) if labelled else None
        if labelled is not None and key is not None:
            if key in items:
                log.add(f"second {labelled[0]} in {section} skipped", number)
                current = Item(number, labelled[1])  # read, with its lines, and dropped
            else:
                current = items[key] = Item(number, labelled[1])
        elif current is not None:
            current.rest.append(text)
            if not code:
                current.prose.append(text)
        else:
            log.add(f"text in {section} outside its bullets skipped: {excerpt(text)}", number)
    return items


_KEY_FILES_LABELS = frozenset({"关键文件", "key files"})
_KEY_SYMBOLS_LABELS = frozenset({"关键符号", "key symbols"})


@dataclass
class Implementation:
    steps: list[str] = field(default_factory=list)
    key_files: list[KeyFileDraft] = field(default_factory=list)
    key_symbols: list[str] = field(default_factory=list)
    # steps → files (after `关键文件：`) → symbols (after `关键符号：a, b`) or symbol_lines
    # (after a bare `关键符号：`, the symbols follow on their own lines)
    mode: str = "steps"


def read_implementation(lines: list[Line], log: WarningLog) -> Implementation:
    """Numbered steps, then `关键文件：` bullets, then the `关键符号：` line."""
    found = Implementation()
    for number, text, code in fenced(lines):
        labelled = None if code else split_label(text.strip())
        label = labelled[0] if labelled and not is_indented(text) else ""
        if label in _KEY_FILES_LABELS and labelled:
            found.mode = "files"
            if labelled[1]:
                _read_key_file_line(found, number, "- " + labelled[1], log)
        elif label in _KEY_SYMBOLS_LABELS and labelled:
            found.mode = "symbols" if labelled[1] else "symbol_lines"
            found.key_symbols.extend(split_list(labelled[1]))
        elif found.mode == "steps":
            found.steps.append(text)
        elif found.mode == "files":
            _read_key_file_line(found, number, text, log)
        elif found.mode == "symbol_lines":
            found.key_symbols.extend(split_list(strip_bullet(text) or text))
        elif text.strip():
            log.add(f"text after 关键符号 skipped: {excerpt(text)}", number)
    return found


def _read_key_file_line(found: Implementation, number: int, text: str, log: WarningLog) -> None:
    if not text.strip():
        return
    bullet = strip_bullet(text)
    if bullet is None and found.key_files and is_indented(text):
        found.key_files[-1].more.append(text.strip())  # a note wrapped onto the next line
        return
    draft = read_key_file(bullet) if bullet is not None else None
    if draft is None:
        log.add(f"key file bullet not understood: {excerpt(text)}", number)
        return
    for problem in draft.problems:
        log.add(f"key file attribute not understood: {excerpt(problem)}", number)
    found.key_files.append(draft)


def section_text(lines: list[Line]) -> str:
    return join_text(text for _, text in lines)


SUMMARY_LABELS = {
    "一句话": "summary",
    "一句话总结": "summary",
    "one-liner": "summary",
    "one line": "summary",
    "tl;dr": "summary",
    "推荐动作": "recommendation",
    "推荐": "recommendation",
    "recommendation": "recommendation",
}


def read_summary(lines: list[Line], log: WarningLog) -> dict[str, str]:
    """`- 一句话：…` and `- 推荐动作：…` with its numbered sub-items, one per line."""
    items = read_items(lines, SUMMARY_LABELS, "执行摘要", log)
    for key, label in (("summary", "一句话"), ("recommendation", "推荐动作")):
        if key not in items:
            log.add(f"missing {label} in 执行摘要")
    return {key: item.text() for key, item in items.items()}


RISK_LABELS = {
    "风险": "risks",
    "risk": "risks",
    "risks": "risks",
    "影响": "impact",
    "impact": "impact",
    "影响程度": "impact_level",
    "impact level": "impact_level",
    "风险标记": "risk_flags",
    "risk flags": "risk_flags",
}


def read_risks(lines: list[Line], log: WarningLog) -> dict[str, Any]:
    """风险 (with its numbered sub-items), 影响 with its 影响程度, and the 风险标记 list."""
    items = read_items(lines, RISK_LABELS, "风险与影响", log)
    risks = items["risks"].text() if "risks" in items else ""
    impact = items["impact"].text() if "impact" in items else ""
    level = level_word(items["impact_level"].text()) if "impact_level" in items else None
    level = level or impact_level(impact) or impact_level(risks)
    for key, label in (("risks", "风险"), ("impact", "影响")):
        if key not in items:
            log.add(f"missing {label} in 风险与影响")
    if level is None and ("impact" in items or "impact_level" in items):
        log.add("no 影响程度 (高/中/低) in 风险与影响")
    flags = items["risk_flags"].prose_text().replace("\n", ",") if "risk_flags" in items else ""
    return {
        "risks": risks,
        "impact": impact,
        "impact_level": level,
        "risk_flags": split_list(flags),
    }


@dataclass
class SnippetDraft:
    path: str
    note_lines: list[str] = field(default_factory=list)
    language: str = ""
    code_blocks: list[list[str]] = field(default_factory=list)

    def fields(self) -> dict[str, str]:
        blocks = ("\n".join(block).rstrip("\n") for block in self.code_blocks)
        code = "\n\n".join(block for block in blocks if block.strip())
        note = join_text(self.note_lines)
        return {"path": self.path, "note": note, "language": self.language, "code": code}


def read_snippets(lines: list[Line], log: WarningLog) -> list[dict[str, str]]:
    """`### \\`path\\`` headings, each with a note paragraph and a fenced code block."""
    snippets: list[SnippetDraft] = []
    fence: str | None = None
    block: list[str] | None = None
    for number, text in lines:
        if fence is not None:
            if closes_fence(text, fence):
                fence = None
            elif block is not None:
                block.append(text)
            continue
        fence = fence_marker(text)
        heading = read_heading(text) if fence is None else None
        if fence is not None:
            block = _open_code_block(snippets, number, fence_language(text, fence), log)
        elif heading is not None:
            path = _snippet_path(heading.text)
            if not path:
                log.add(f'snippet heading without a path skipped: "{excerpt(text)}"', number)
            snippets.append(SnippetDraft(path))
        elif snippets:
            snippets[-1].note_lines.append(text.strip())
        elif text.strip():
            log.add(f"text before the first snippet skipped: {excerpt(text)}", number)
    return [snippet.fields() for snippet in snippets if snippet.path]


def _open_code_block(
    snippets: list[SnippetDraft], number: int, language: str, log: WarningLog
) -> list[str] | None:
    if not snippets:
        log.add("code block before the first snippet heading skipped", number)
        return None
    snippet = snippets[-1]
    if not snippet.code_blocks:
        snippet.language = language
    snippet.code_blocks.append([])
    return snippet.code_blocks[-1]


def _snippet_path(heading_text: str) -> str:
    start = heading_text.find("`")
    end = heading_text.find("`", start + 1) if start != -1 else -1
    return heading_text[start + 1 : end].strip() if end != -1 else heading_text.strip()


def read_related_section(lines: list[Line], log: WarningLog) -> list[dict[str, Any]]:
    """``- PR #7434 title: relation`` bullets; lines under a bullet continue its relation."""
    found: list[tuple[RelatedDraft, list[str]]] = []  # a bullet and its continuation lines
    for number, text, code in fenced(lines):
        if not text.strip():
            continue
        bullet = None if code else strip_bullet(text)
        draft = read_related(bullet) if bullet is not None else None
        if draft is not None:
            found.append((draft, []))
        elif found and (bullet is None or is_indented(text)):
            found[-1][1].append(text)  # joined once at the end: linear in the lines
        elif bullet is not None:
            log.add(f"related PR bullet not understood: {excerpt(text)}", number)
        else:
            log.add(f"text in 关联脉络 outside its bullets skipped: {excerpt(text)}", number)
    return [
        {"number": draft.number, "title": draft.title, "relation": join_item(draft.relation, rest)}
        for draft, rest in found
    ]
