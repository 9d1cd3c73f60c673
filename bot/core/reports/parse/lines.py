"""Line-level reading of a Markdown report: lines, headings, bullets, labels, lists, sections.

Reports come from outside (files, the HTTP API), so everything here is a single pass over the
lines with `str` methods and index scans (regexes only as one character class), no recursion:
linear on any input.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

Line = tuple[int, str]  # (1-based line number, text without its line ending)

# A report with thousands of broken bullets should not produce a thousand-line ingest log.
MAX_WARNINGS = 50
EXCERPT_LENGTH = 60
MAX_LABEL_LENGTH = 16
COLONS = ":："
# Single character classes only: a scan in C, linear, nothing to backtrack.
LIST_SEPARATOR = re.compile("[,，、;；]")
COLON = re.compile("[:：]")
BULLET_MARKERS = frozenset("-*+•")
THEMATIC_BREAKS = frozenset({"---", "***", "___"})


class WarningLog:
    """Warnings in reading order, each naming the line; capped at MAX_WARNINGS."""

    def __init__(self) -> None:
        self._messages: list[str] = []
        self._dropped = 0

    def add(self, message: str, line: int | None = None) -> None:
        if len(self._messages) >= MAX_WARNINGS:
            self._dropped += 1
            return
        self._messages.append(message if line is None else f"line {line}: {message}")

    def messages(self) -> list[str]:
        if self._dropped:
            return [*self._messages, f"... and {self._dropped} more warnings"]
        return list(self._messages)


def excerpt(text: str) -> str:
    """The start of a line, for a warning: long enough to find it, short enough to log."""
    text = text.strip()
    return text if len(text) <= EXCERPT_LENGTH else text[:EXCERPT_LENGTH] + "…"


def split_lines(text: str) -> list[Line]:
    """Numbered lines; a BOM and `\\r\\n` / `\\r` line endings are accepted.

    Not `str.splitlines()`: it also breaks on U+2028, form feeds and the like, which may sit
    inside a code snippet and must not renumber the lines a warning names.
    """
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return list(enumerate(text.split("\n"), start=1))


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    text: str


def read_heading(line: str) -> Heading | None:
    """An ATX heading (`# text`, up to 6 `#`, at most 3 spaces of indentation)."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3 or not stripped.startswith("#"):
        return None
    level = len(stripped) - len(stripped.lstrip("#"))
    rest = stripped[level:]
    if level > 6 or (rest and rest[0] not in " \t"):
        return None
    text = rest.strip()
    closing = text.rstrip("#")  # optional closing sequence `## text ##`
    if closing != text and (not closing or closing[-1] in " \t"):
        text = closing.rstrip()
    return Heading(level, text)


def fence_marker(line: str) -> str | None:
    """The opening run of a fenced code block (``` or ~~~), or None."""
    stripped = line.lstrip(" \t")
    if not stripped.startswith(("```", "~~~")):
        return None
    char = stripped[0]
    marker = char * (len(stripped) - len(stripped.lstrip(char)))
    if char == "`" and "`" in stripped[len(marker) :]:
        return None  # CommonMark: "```a```" on one line is inline code, not a fence
    return marker


def closes_fence(line: str, marker: str) -> bool:
    stripped = line.strip(" \t")
    return stripped.startswith(marker) and not stripped.strip(marker[0])


def closing_run(line: str) -> tuple[str, int] | None:
    """(char, length) when the line could close a fence: only a run of ≥3 ` or ~, spaces."""
    stripped = line.strip(" \t")
    if len(stripped) < 3 or stripped[0] not in "`~" or stripped.strip(stripped[0]):
        return None
    return stripped[0], len(stripped)


class FenceCloser:
    """Whether a fence opened at a line is closed later, in O(1) after one pass over the lines.

    CommonMark: a fence closes at the first later line made only of its char, at least as many
    as it opened with; so it is closed iff some later line is such a run. `longest[c][i]` is the
    longest closing run of `c` on lines i and after."""

    def __init__(self, lines: list[Line]) -> None:
        size = len(lines)
        self._longest = {"`": [0] * (size + 1), "~": [0] * (size + 1)}
        for index in range(size - 1, -1, -1):
            run = closing_run(lines[index][1])
            for char, longest in self._longest.items():
                here = run[1] if run is not None and run[0] == char else 0
                longest[index] = max(longest[index + 1], here)

    def closed_after(self, index: int, marker: str) -> bool:
        """Whether the fence `marker` opened on lines[index] closes on a later line."""
        return self._longest[marker[0]][index + 1] >= len(marker)


def fenced(lines: Iterable[Line]) -> Iterator[tuple[int, str, bool]]:
    """Each line with whether it belongs to a fenced code block (its fence lines included);
    a fence left open runs to the end of `lines`."""
    marker: str | None = None
    for number, text in lines:
        if marker is not None:
            if closes_fence(text, marker):
                marker = None
            yield number, text, True
            continue
        marker = fence_marker(text)
        yield number, text, marker is not None


def fence_language(line: str, marker: str) -> str:
    info = line.lstrip(" \t")[len(marker) :].split()
    return info[0] if info else ""


def is_indented(line: str) -> bool:
    return line[:1] in (" ", "\t")


def strip_bullet(line: str) -> str | None:
    """The text of a bullet (`- x`, `* x`, `+ x`, `• x`, at any indentation), else None."""
    stripped = line.lstrip(" \t")
    if len(stripped) >= 2 and stripped[0] in BULLET_MARKERS and stripped[1] in " \t":
        return stripped[2:].strip()
    if stripped in BULLET_MARKERS and stripped:
        return ""
    return None


def normalize_label(label: str) -> str:
    """`**风险**`, ` Risk Flags ` → `风险`, `risk flags`: labels compare after this."""
    return " ".join(label.replace("*", "").replace("_", " ").split()).lower()


def split_label(text: str) -> tuple[str, str] | None:
    """`label：value` or `label: value` → (normalized label, value); the colon must come early."""
    colon = COLON.search(text, 0, MAX_LABEL_LENGTH + 4)
    if colon is None:
        return None
    label = normalize_label(text[: colon.start()])
    return (label, text[colon.end() :].strip()) if label else None


def split_list(text: str) -> list[str]:
    """`a , b，c、d` → [a, b, c, d]: trimmed, backticks and closing full stops dropped, unique."""
    items = LIST_SEPARATOR.split(text)
    cleaned = (item.strip().strip("`").strip().rstrip("。.").strip() for item in items)
    return list(dict.fromkeys(item for item in cleaned if item))


def join_text(lines: Iterable[str]) -> str:
    """Section text: lines right-trimmed, runs of blank lines collapsed, edges trimmed.

    A thematic break (`---`) at either edge separates sections, it is not section text.
    """
    kept: list[str] = []
    for line in lines:
        line = line.rstrip()
        if line or (kept and kept[-1]):
            kept.append(line)
    while kept and (not kept[-1] or kept[-1].strip() in THEMATIC_BREAKS):
        kept.pop()
    first = 0  # an index, not pop(0): a section of 100k `---` lines stays linear
    while first < len(kept) and (not kept[first] or kept[first].strip() in THEMATIC_BREAKS):
        first += 1
    return "\n".join(kept[first:])


def join_item(first: str, rest: Iterable[str]) -> str:
    """A bullet's value and its continuation lines, one per line, indentation dropped."""
    lines = [first.strip(), *(line.strip() for line in rest)]
    return "\n".join(line for line in lines if line)


def read_pr_number(text: str, start: int = 0) -> tuple[int, int] | None:
    """`PR #7422`, `PR 7422`, `#7422` at `start` → (number, index after it)."""
    pos = start
    if text[pos : pos + 2].lower() == "pr":
        pos += 2
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if text[pos : pos + 1] == "#":
            pos += 1
    elif text[pos : pos + 1] == "#":
        pos += 1
    else:
        return None
    return read_number(text, pos)


def read_number(text: str, start: int) -> tuple[int, int] | None:
    """ASCII digits at `start` (at most 10: a PR number, never a 2 MB int) → (value, end)."""
    end = start
    while end < len(text) and end - start <= 10 and "0" <= text[end] <= "9":
        end += 1
    if end == start or end - start > 10 or int(text[start:end]) < 1:
        return None
    return int(text[start:end]), end


@dataclass
class Document:
    """A report split into its preamble (header bullets) and its known sections."""

    preamble: list[Line] = field(default_factory=list)
    sections: dict[str, list[Line]] = field(default_factory=dict)
