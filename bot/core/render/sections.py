"""The parts of a report that `/pr REF SECTION` shows, as a flat list of plain blocks.

A block is one paragraph, one labelled field, one key file, one snippet or one related PR.
Each platform renders a block with a macro of the same kind; long paragraphs and snippets are
split between messages, other blocks are cut with "…" when a single one is too long.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from bot.core.models import Section
from bot.core.render.views import github_pr_url, link_url, split_paragraphs
from bot.core.reports.model import KeyFile, Report


@dataclass(frozen=True, slots=True)
class Block:
    """One piece of a section. Which fields are used depends on `kind`:

    heading: label · para: label (first paragraph only), text · field: label, text ·
    file: path, meta, text (note) · code: path, note, language, text (code) ·
    related: number, label (title), text (relation), url (the PR on GitHub, "" when the repo
    is not owner/name) · link: text (URL) · empty: text.
    `tight` joins it to the block before with a line break instead of a blank line."""

    kind: str
    text: str = ""
    label: str = ""
    path: str = ""
    meta: str = ""
    note: str = ""
    language: str = ""
    number: int = 0
    tight: bool = False
    url: str = ""


SPLITTABLE_KINDS = frozenset({"para", "code"})
CUTTABLE_BLOCK_FIELDS = ("text", "note", "meta", "path", "label")


def _paras(text: str, label: str = "") -> list[Block]:
    paragraphs = split_paragraphs(text)
    return [
        Block("para", text=paragraph, label=label if index == 0 else "")
        for index, paragraph in enumerate(paragraphs)
    ]


def _fields(pairs: list[tuple[str, str]]) -> list[Block]:
    present = [(label, value) for label, value in pairs if value]
    return [
        Block("field", label=label, text=value, tight=index > 0)
        for index, (label, value) in enumerate(present)
    ]


def _file_meta(key_file: KeyFile, labels: Mapping[str, str]) -> str:
    parts = [
        (labels["module"], key_file.module),
        (labels["category"], key_file.category),
        (labels["kind"], key_file.kind),
        (labels["symbols"], ", ".join(key_file.symbols)),
    ]
    return " · ".join(f"{name} {value}" for name, value in parts if value)


def summary_blocks(report: Report, labels: Mapping[str, str]) -> list[Block]:
    impact = labels[f"impact_{report.impact_level.value}"] if report.impact_level else ""
    merged = report.merged_at.strftime("%Y-%m-%d %H:%M") if report.merged_at else ""
    blocks = _paras(report.summary)
    blocks += _paras(report.recommendation, labels["recommendation"])
    blocks += _fields(
        [
            (labels["impact_level"], impact),
            (labels["risk_flags"], ", ".join(report.risk_flags)),
            (labels["tags"], ", ".join(report.tags)),
            (labels["merged_at"], merged),
        ]
    )
    return blocks + _links(report, labels)


def _links(report: Report, labels: Mapping[str, str]) -> list[Block]:
    """The PR on GitHub and the full report, as a digest entry links them (one link when the
    report's URL is the PR itself)."""
    pr_url = github_pr_url(report.repo, report.number)
    links = [(labels["github_link"], pr_url)] if pr_url else []
    if report.url and link_url(report.url) != pr_url:
        links.append((labels["link"], report.url))
    return [Block("link", text=url, label=label, tight=True) for label, url in links]


# The impact text often ends by naming the level ("影响程度：中。"); the level's own field says it.
_STATED_LEVEL = re.compile(r"\s*(?:影响程度|impact level)\s*[:：]\s*[^\s。.]{1,12}[。.]?\s*$", re.I)


def risks_blocks(report: Report, labels: Mapping[str, str]) -> list[Block]:
    impact = labels[f"impact_{report.impact_level.value}"] if report.impact_level else ""
    blocks = _paras(report.risks, labels["risks_text"])
    stated = _STATED_LEVEL.sub("", report.impact) if impact else report.impact
    blocks += _paras(stated, labels["impact_text"])
    blocks += _fields(
        [
            (labels["impact_level"], impact),
            (labels["risk_flags"], ", ".join(report.risk_flags)),
        ]
    )
    return blocks


def files_blocks(report: Report, labels: Mapping[str, str]) -> list[Block]:
    blocks = [
        Block("file", path=key_file.path, meta=_file_meta(key_file, labels), text=key_file.note)
        for key_file in report.key_files
    ]
    blocks += _fields([(labels["key_symbols"], ", ".join(report.key_symbols))])
    return blocks


def related_blocks(report: Report) -> list[Block]:
    """One block per related PR, each linking that PR on GitHub (the report's own repo)."""
    return [
        Block(
            "related",
            number=related.number,
            label=related.title,
            text=related.relation,
            url=github_pr_url(report.repo, related.number) or "",
        )
        for related in report.related
    ]


def snippet_blocks(report: Report) -> list[Block]:
    return [
        Block("code", path=s.path, note=s.note, language=s.language, text=s.code)
        for s in report.snippets
        if s.code or s.note
    ]


def _part(title: str, blocks: list[Block]) -> list[Block]:
    return [Block("heading", label=title), *blocks] if blocks else []


def full_blocks(report: Report, labels: Mapping[str, str]) -> list[Block]:
    return [
        *summary_blocks(report, labels),
        *_part(labels["section_motivation"], _paras(report.motivation)),
        *_part(labels["section_impl"], _paras(report.implementation)),
        *_part(labels["section_files"], files_blocks(report, labels)),
        *_part(labels["section_snippets"], snippet_blocks(report)),
        *_part(labels["section_comments"], _paras(report.comment_highlights)),
        *_part(labels["section_risks"], risks_blocks(report, labels)),
        *_part(labels["section_related"], related_blocks(report)),
    ]


def section_blocks(report: Report, section: Section, labels: Mapping[str, str]) -> list[Block]:
    """The blocks of one section; a section the report lacks says so instead of being empty."""
    builders = {
        Section.SUMMARY: lambda: summary_blocks(report, labels),
        Section.RISKS: lambda: risks_blocks(report, labels),
        Section.FILES: lambda: files_blocks(report, labels),
        Section.RELATED: lambda: related_blocks(report),
        Section.MOTIVATION: lambda: _paras(report.motivation),
        Section.IMPL: lambda: _paras(report.implementation),
        Section.COMMENTS: lambda: _paras(report.comment_highlights),
        Section.FULL: lambda: full_blocks(report, labels),
    }
    blocks = builders[section]()
    if not blocks:
        title = labels[f"section_{section.value}"]
        blocks = [Block("empty", text=labels["section_empty"].format(section=title))]
    return blocks
