"""The outline of a report: which lines are the header and which belong to each known section.

Headings are matched by name, not by level (`# 执行摘要` and `## 执行摘要` are the same
section); a deeper unknown heading is part of the section it sits in, an unknown heading at a
section's level starts an unknown section that is skipped with a warning. Code fences are
tracked so that `# comment` lines in a snippet are never mistaken for headings.
"""

from __future__ import annotations

from bot.core.reports.parse.lines import (
    Document,
    FenceCloser,
    Heading,
    Line,
    WarningLog,
    closes_fence,
    excerpt,
    fence_marker,
    normalize_label,
    read_heading,
)

# section key → the heading reports use; warnings name sections by these headings
SECTION_TITLES = {
    "summary": "执行摘要",
    "motivation": "功能与动机",
    "implementation": "实现拆解",
    "snippets": "关键源码片段",
    "comments": "评论区精华",
    "risks": "风险与影响",
    "related": "关联脉络",
}
_SECTION_ALIASES = {normalize_label(title): key for key, title in SECTION_TITLES.items()} | {
    "summary": "summary",
    "executive summary": "summary",
    "motivation": "motivation",
    "implementation": "implementation",
    "源码片段": "snippets",
    "snippets": "snippets",
    "key snippets": "snippets",
    "comment highlights": "comments",
    "review highlights": "comments",
    "risks": "risks",
    "risks and impact": "risks",
    "related": "related",
    "related prs": "related",
}
# Parts of 实现拆解 that some reports write as headings instead of `关键文件：` label lines.
INLINE_LABELS = frozenset({"关键文件", "关键符号", "key files", "key symbols"})
_NUMBERING_ENDS = frozenset(".、)）")
_CHINESE_NUMERALS = frozenset("一二三四五六七八九十")


def section_key(heading_text: str) -> str | None:
    """`执行摘要`, `2. 执行摘要`, `二、执行摘要：`, `Executive Summary` → `summary`."""
    return _SECTION_ALIASES.get(_heading_name(heading_text))


def _heading_name(heading_text: str) -> str:
    text = heading_text.strip()
    pos = 0
    while pos < len(text) and pos < 4 and (text[pos].isdigit() or text[pos] in _CHINESE_NUMERALS):
        pos += 1
    if 0 < pos < len(text) and text[pos] in _NUMBERING_ENDS:
        text = text[pos + 1 :]
    return normalize_label(text.rstrip(":：").strip())


class _Outliner:
    def __init__(self, lines: list[Line], log: WarningLog) -> None:
        self.doc = Document()
        self.log = log
        self.closer = FenceCloser(lines)
        self.target: list[Line] | None = self.doc.preamble  # None: inside a skipped section
        self.key: str | None = None  # the known section being read
        self.level = 0
        self.fence: str | None = None
        self.fence_line = 0
        self.fence_closes = False  # a closing fence follows: everything until it is code

    def feed(self, index: int, number: int, text: str) -> None:
        if self.fence is not None:
            if self._in_fence(text, self.fence):
                self._keep_code(number, text)
                if closes_fence(text, self.fence):
                    self.fence = None
                return
            # A known section heading ends a fence that is never closed: better than
            # swallowing every section after a truncated snippet.
            self.log.add("code block is never closed", self.fence_line)
            self.fence = None
        heading = read_heading(text)
        if heading is not None:
            self._heading(number, text, heading)
            return
        marker = fence_marker(text)
        if marker is not None:
            self.fence, self.fence_line = marker, number
            self.fence_closes = self.closer.closed_after(index, marker)
            if self.target is self.doc.preamble:
                self.log.add("code block before the first section skipped", number)
            self._keep_code(number, text)
        else:
            self._keep(number, text)

    def _in_fence(self, text: str, fence: str) -> bool:
        """Inside a closed fence every line is code (`# 风险与影响` too, CommonMark); inside one
        never closed, a known section heading ends it."""
        if self.fence_closes or closes_fence(text, fence):
            return True
        heading = read_heading(text)
        return heading is None or not section_key(heading.text)

    def _keep_code(self, number: int, text: str) -> None:
        """Code lines go to their section; in the header area they are skipped (a fenced
        `- 标题：…` or `# PR #1` there is an example, not the report's header)."""
        if self.target is not self.doc.preamble:
            self._keep(number, text)

    def finish(self) -> Document:
        if self.fence is not None:
            self.log.add("code block is never closed", self.fence_line)
        return self.doc

    def _heading(self, number: int, text: str, heading: Heading) -> None:
        key = section_key(heading.text)
        if key is not None:
            self._start(number, key, heading.level)
        elif self.key is not None and _heading_name(heading.text) in INLINE_LABELS:
            self._keep(number, heading.text.rstrip(":：") + "：")
        elif self.target is self.doc.preamble:
            self._keep(number, text)  # the `# PR #7422 完整报告` heading; the header reads it
        elif self.key is not None and (heading.level > self.level or self._is_snippet(heading)):
            self._keep(number, text)
        elif self.target is None and heading.level > self.level:
            pass  # a sub-heading of a skipped section
        else:
            self.log.add(f'unknown section "{excerpt(heading.text)}" skipped', number)
            self.target, self.key, self.level = None, None, heading.level

    def _is_snippet(self, heading: Heading) -> bool:
        return self.key == "snippets" and heading.text.startswith("`")

    def _start(self, number: int, key: str, level: int) -> None:
        if key in self.doc.sections:
            self.log.add(f"section {SECTION_TITLES[key]} appears again; read as one", number)
        self.target = self.doc.sections.setdefault(key, [])
        self.key, self.level = key, level

    def _keep(self, number: int, text: str) -> None:
        if self.target is not None:
            self.target.append((number, text))


def outline(lines: list[Line], log: WarningLog) -> Document:
    """Split numbered lines into the header (preamble) and the known sections."""
    outliner = _Outliner(lines, log)
    for index, (number, text) in enumerate(lines):
        outliner.feed(index, number, text)
    return outliner.finish()
