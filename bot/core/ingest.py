"""Ingest report files and directories into the store.

Bad files are reported by name and skipped; every other file is still ingested. Files are
parsed one by one and written in batches, so a directory of 10,000 reports is a few dozen
transactions instead of 10,000.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.core.reports.model import Report
from bot.core.reports.parser import NotAReportError, ParseResult, parse_file
from bot.core.reports.tags import TagRule
from bot.core.store.reports import IngestOutcome, IngestResult, ReportStore

REPORT_SUFFIXES = frozenset({".md", ".txt", ".json"})
BATCH_SIZE = 200

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class IngestFailure:
    source: str
    reason: str


@dataclass
class IngestSummary:
    results: list[IngestResult] = field(default_factory=list)
    failures: list[IngestFailure] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)

    def count(self, outcome: IngestOutcome) -> int:
        return sum(1 for r in self.results if r.outcome is outcome)

    @property
    def line(self) -> str:
        return (
            f"{self.count(IngestOutcome.NEW)} new, {self.count(IngestOutcome.UPDATED)} updated, "
            f"{self.count(IngestOutcome.UNCHANGED)} unchanged, {len(self.failures)} failed"
        )


def expand_paths(paths: Iterable[Path]) -> tuple[list[Path], list[IngestFailure]]:
    """Files named directly, plus report files found under directories (sorted, recursive)."""
    files: list[Path] = []
    missing: list[IngestFailure] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(_report_files(path)))
        elif path.is_file():
            files.append(path)
        else:
            missing.append(IngestFailure(str(path), "no such file or directory"))
    return files, missing


def _report_files(directory: Path) -> Iterator[Path]:
    for candidate in directory.rglob("*"):
        hidden = any(part.startswith(".") for part in candidate.relative_to(directory).parts)
        if candidate.is_file() and candidate.suffix.lower() in REPORT_SUFFIXES and not hidden:
            yield candidate


def parse_one(path: Path, rules: Sequence[TagRule]) -> ParseResult | IngestFailure:
    try:
        return parse_file(path, rules)
    except NotAReportError as exc:
        return IngestFailure(str(path), exc.reason)
    except OSError as exc:
        return IngestFailure(str(path), exc.strerror or str(exc))


async def ingest_paths(
    store: ReportStore,
    paths: Iterable[Path],
    rules: Sequence[TagRule] = (),
    progress: Progress | None = None,
) -> IngestSummary:
    files, missing = expand_paths(paths)
    summary = IngestSummary(failures=list(missing))
    batch: list[tuple[Report, str]] = []
    for index, path in enumerate(files, start=1):
        parsed = parse_one(path, rules)
        if isinstance(parsed, IngestFailure):
            summary.failures.append(parsed)
        else:
            summary.warnings.extend((str(path), w) for w in parsed.warnings)
            batch.append((parsed.report, str(path)))
        if len(batch) >= BATCH_SIZE:
            summary.results.extend(await store.upsert_many(batch))
            batch = []
        if progress is not None:
            progress(index, len(files))
    if batch:
        summary.results.extend(await store.upsert_many(batch))
    return summary
