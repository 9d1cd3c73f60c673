"""The weekly synthesis: what a window of PRs adds up to, computed from every item of a digest
(shown or not), pure and without I/O.

Counts by tag and by impact, the breaking changes (tag `breaking`), hot files (key files that
two or more PRs of the window touched), storylines from `关联脉络` (PRs of the window that name
each other, and reverts), and the reports changed since the last digest (revision > 1).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.core.reports.model import Report

BREAKING_TAG = "breaking"
SYNTHESIS_TOP_TAGS = 10  # the tag counts shown (largest first)
SYNTHESIS_TOP_FILES = 8  # hot files shown (most PRs first)
SYNTHESIS_MAX_LIST = 20  # breaking changes, storylines and changed reports shown at most
UNKNOWN_IMPACT = "unknown"
IMPACT_ORDER = ("high", "medium", "low", UNKNOWN_IMPACT)

_REVERT = re.compile(r"revert|回滚|回退|撤销|撤回", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class PRMention:
    """A PR as the synthesis names it: `repo#number`, its title, and its report's URL."""

    repo: str
    number: int
    title: str = ""


@dataclass(frozen=True, slots=True)
class HotFile:
    path: str
    prs: tuple[PRMention, ...]


@dataclass(frozen=True, slots=True)
class Storyline:
    """PRs that belong together: `revert` (one reverts the other) or `related` (they name each
    other in `关联脉络`); `note` is the first relation the reports give."""

    kind: str
    prs: tuple[PRMention, ...]
    note: str = ""


@dataclass(frozen=True, slots=True)
class Synthesis:
    prs: int  # every PR of the window
    by_tag: tuple[tuple[str, int], ...]
    by_impact: tuple[tuple[str, int], ...]  # IMPACT_ORDER keys with a count > 0
    breaking: tuple[PRMention, ...]
    hot_files: tuple[HotFile, ...]
    storylines: tuple[Storyline, ...]
    changed: tuple[PRMention, ...]  # re-ingested with new content (revision > 1)

    @property
    def is_empty(self) -> bool:
        return self.prs == 0


def _mention(report: Report) -> PRMention:
    return PRMention(report.repo, report.number, report.title)


def _counts(keys: Sequence[str]) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    return sorted(counts.items(), key=lambda pair: -pair[1])  # stable: first seen first


def _hot_files(reports: Sequence[Report]) -> tuple[HotFile, ...]:
    touched: dict[str, list[PRMention]] = {}
    for report in reports:
        for path in dict.fromkeys(k.path.strip() for k in report.key_files if k.path.strip()):
            touched.setdefault(path, []).append(_mention(report))
    hot = [HotFile(path, tuple(prs)) for path, prs in touched.items() if len(prs) >= 2]
    hot.sort(key=lambda item: -len(item.prs))
    return tuple(hot[:SYNTHESIS_TOP_FILES])


def _reverts(report: Report, number: int, relation: str) -> bool:
    """Whether `report` reverts PR `number`: the relation says so, or the report's title is a
    revert that names that number."""
    if _REVERT.search(relation):
        return True
    return bool(_REVERT.search(report.title)) and str(number) in report.title


def _storylines(reports: Sequence[Report]) -> tuple[Storyline, ...]:
    """Reverts (the report's title, or a related PR's relation, says so) and pairs of PRs of
    the window that name each other, each pair once."""
    by_key = {(r.repo.lower(), r.number): r for r in reports}
    lines: list[Storyline] = []
    seen: set[frozenset[tuple[str, int]]] = set()
    for report in reports:
        for related in report.related:
            key = (report.repo.lower(), related.number)
            other = by_key.get(key)
            revert = _reverts(report, related.number, related.relation)
            if other is None and not revert:
                continue
            pair = frozenset({(report.repo.lower(), report.number), key})
            if pair in seen or key == (report.repo.lower(), report.number):
                continue
            seen.add(pair)
            target = _mention(other) if other else PRMention(report.repo, related.number, "")
            kind = "revert" if revert else "related"
            lines.append(Storyline(kind, (_mention(report), target), related.relation.strip()))
    lines.sort(key=lambda line: line.kind != "revert")  # reverts first, stable otherwise
    return tuple(lines[:SYNTHESIS_MAX_LIST])


def synthesize(items: Sequence[tuple[Report, int]]) -> Synthesis:
    """The synthesis of a window: `items` are (report, revision), every PR of the digest."""
    reports = [report for report, _ in items]
    tags = [tag.lower() for r in reports for tag in dict.fromkeys(t.lower() for t in r.tags)]
    impacts = [r.impact_level.value if r.impact_level else UNKNOWN_IMPACT for r in reports]
    impact_counts = dict(_counts(impacts))
    return Synthesis(
        prs=len(reports),
        by_tag=tuple(_counts(tags)[:SYNTHESIS_TOP_TAGS]),
        by_impact=tuple((key, impact_counts[key]) for key in IMPACT_ORDER if key in impact_counts),
        breaking=tuple(_mention(r) for r in reports if BREAKING_TAG in (t.lower() for t in r.tags))[
            :SYNTHESIS_MAX_LIST
        ],
        hot_files=_hot_files(reports),
        storylines=_storylines(reports),
        changed=tuple(_mention(r) for r, revision in items if revision > 1)[:SYNTHESIS_MAX_LIST],
    )
