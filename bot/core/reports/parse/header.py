"""The header of a Markdown report: the `# PR #N` heading and the 仓库/标题/合并时间/原文链接
bullets before the first section. The PR link fills in a missing number or repo.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.core.reports.parse.items import is_repo_name, pull_request_ref, read_time
from bot.core.reports.parse.lines import (
    THEMATIC_BREAKS,
    Line,
    WarningLog,
    excerpt,
    read_heading,
    read_pr_number,
    split_label,
    strip_bullet,
)

HEADER_LABELS = {
    "仓库": "repo",
    "repo": "repo",
    "repository": "repo",
    "标题": "title",
    "title": "title",
    "合并时间": "merged_at",
    "merged at": "merged_at",
    "merged": "merged_at",
    "原文链接": "url",
    "链接": "url",
    "url": "url",
    "link": "url",
}
HEADER_NAMES = {"repo": "仓库", "title": "标题", "merged_at": "合并时间", "url": "原文链接"}


@dataclass
class Header:
    number: int | None = None
    values: dict[str, tuple[int, str]] = field(default_factory=dict)  # field → (line, text)


def read_header(lines: list[Line], log: WarningLog) -> dict[str, Any]:
    """The header bullets and the `# PR #N` heading → repo, number, title, url, merged_at."""
    header = Header()
    for number, text in lines:
        heading = read_heading(text)
        if heading is not None:
            found = read_pr_number(heading.text)
            if found is not None and header.number is None:
                header.number = found[0]
            elif found is None:
                log.add(
                    f'heading "{excerpt(heading.text)}" before the first section skipped', number
                )
            continue
        _read_header_line(header, number, text, log)
    return _resolve_header(header, log)


def _read_header_line(header: Header, number: int, text: str, log: WarningLog) -> None:
    stripped = text.strip()
    if not stripped or stripped in THEMATIC_BREAKS:
        return
    bullet = strip_bullet(text)
    labelled = split_label(stripped if bullet is None else bullet)
    name = HEADER_LABELS.get(labelled[0]) if labelled else None
    if labelled is None or name is None:
        log.add(f"text before the first section skipped: {excerpt(stripped)}", number)
    elif name in header.values:
        log.add(f"second {HEADER_NAMES[name]} skipped", number)
    else:
        header.values[name] = (number, labelled[1])


def _resolve_header(header: Header, log: WarningLog) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    url_line, url = header.values.get("url", (0, ""))
    url = _link_target(url)
    link_repo, link_number = pull_request_ref(url) if url else (None, None)
    fields["url"] = url or None
    fields["number"] = header.number if header.number is not None else link_number
    if header.number is not None and link_number not in (None, header.number):
        log.add(f"heading says PR #{header.number} but the link says #{link_number}", url_line)
    repo_line, repo = header.values.get("repo", (0, ""))
    repo = repo.replace("`", "").strip()
    if repo and not is_repo_name(repo):
        log.add(f"仓库 is not owner/name: {excerpt(repo)}", repo_line)
        repo = ""
    fields["repo"] = repo or link_repo
    fields["title"] = header.values.get("title", (0, ""))[1].strip()
    time_line, time_text = header.values.get("merged_at", (0, ""))
    fields["merged_at"] = read_time(time_text) if time_text else None
    if time_text and fields["merged_at"] is None:
        log.add(f"合并时间 not understood: {excerpt(time_text)}", time_line)
    for name in ("merged_at", "url"):
        if name not in header.values:
            log.add(f"missing header {HEADER_NAMES[name]}")
    return fields


def _link_target(value: str) -> str:
    """`<url>`, `` `url` ``, `[text](url)` → url."""
    value = value.strip().strip("`<>").strip()
    if value.startswith("[") and "](" in value and value.endswith(")"):
        value = value[value.index("](") + 2 : -1].strip()
    return value
