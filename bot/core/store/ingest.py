"""Ingest report files and directories into the store.

Bad files are reported by name and skipped; every other file is still ingested. A file is bad
when it is larger than the API's 2 MB (refused from its size, never read whole), is no report,
or is refused by the database (the store then writes the rest of its batch one by one). Files
are parsed in batches off the event loop and written one transaction per batch, so a directory
of 10,000 reports is a few dozen transactions instead of 10,000.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from bot.core.reports.parse.parser import NotAReportError, ParseResult, parse_bytes
from bot.core.reports.tags import TagRule
from bot.core.store.reports import IngestOutcome, IngestResult, ReportStore, StoreRejection

REPORT_SUFFIXES = frozenset({".md", ".txt", ".json"})
BATCH_SIZE = 200
MAX_REPORT_BYTES = 2 * 1024 * 1024  # one report, from a file, a URL or the API
TOO_LARGE = f"larger than {MAX_REPORT_BYTES // (1024 * 1024)} MB"
# Input at least this large is parsed in a worker thread, so the event loop (acks, /healthz,
# other chats) never waits on it; smaller input parses inline (a thread hop would cost more).
OFF_LOOP_BYTES = 64 * 1024

Progress = Callable[[int, int], None]
T = TypeVar("T")


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


def read_report_file(path: Path, limit: int = MAX_REPORT_BYTES) -> bytes | None:
    """The file's bytes, or None if it is larger than `limit` (known from its size, and never
    more than `limit` + 1 bytes read if it grows meanwhile)."""
    if path.stat().st_size > limit:
        return None
    with path.open("rb") as file:
        data = file.read(limit + 1)
    return data if len(data) <= limit else None


def parse_data(data: bytes, source: str, rules: Sequence[TagRule]) -> ParseResult | IngestFailure:
    """The report in `data`, or why it is none. Never raises: one input cannot stop the rest."""
    try:
        return parse_bytes(data, source, rules)
    except NotAReportError as exc:
        return IngestFailure(source, exc.reason)
    except (ValueError, ArithmeticError, RecursionError) as exc:  # a parser bug, not a crash
        return IngestFailure(source, f"could not be parsed: {type(exc).__name__}")


def parse_one(path: Path, rules: Sequence[TagRule]) -> ParseResult | IngestFailure:
    """One file parsed, or why it is no report (too large, unreadable, not a report)."""
    try:
        data = read_report_file(path)
    except OSError as exc:
        return IngestFailure(str(path), exc.strerror or str(exc))
    if data is None:
        return IngestFailure(str(path), TOO_LARGE)
    return parse_data(data, str(path), rules)


def parse_many(
    paths: Sequence[Path], rules: Sequence[TagRule]
) -> list[ParseResult | IngestFailure]:
    return [parse_one(path, rules) for path in paths]


async def off_loop_if_large(size: int, work: Callable[[], T]) -> T:
    """`work()`, in a worker thread when its input (`size` bytes) is large."""
    if size < OFF_LOOP_BYTES:
        return work()
    return await asyncio.to_thread(work)


def stored_or_failure(
    outcome: IngestResult | StoreRejection, source: str
) -> IngestResult | IngestFailure:
    if isinstance(outcome, StoreRejection):
        return IngestFailure(source, outcome.reason)
    return outcome


@dataclass(frozen=True, slots=True)
class FileOutcome:
    path: Path
    stored: IngestResult | IngestFailure
    warnings: tuple[str, ...] = ()


async def store_parsed(
    store: ReportStore, paths: Sequence[Path], parsed: Sequence[ParseResult | IngestFailure]
) -> list[FileOutcome]:
    """Write the reports of one parsed batch in one transaction (one by one if the database
    refuses one): what became of each file, in the order given. A store outage raises."""
    good = [
        (item.report, str(path))
        for path, item in zip(paths, parsed, strict=True)
        if not isinstance(item, IngestFailure)
    ]
    stored = iter(await store.upsert_each(good)) if good else iter(())
    return [
        FileOutcome(path, item)
        if isinstance(item, IngestFailure)
        else FileOutcome(path, stored_or_failure(next(stored), str(path)), tuple(item.warnings))
        for path, item in zip(paths, parsed, strict=True)
    ]


async def ingest_paths(
    store: ReportStore,
    paths: Iterable[Path],
    rules: Sequence[TagRule] = (),
    progress: Progress | None = None,
) -> IngestSummary:
    files, missing = expand_paths(paths)
    summary = IngestSummary(failures=list(missing))
    for start in range(0, len(files), BATCH_SIZE):
        chunk = files[start : start + BATCH_SIZE]
        parsed = await asyncio.to_thread(parse_many, chunk, rules)
        for done in await store_parsed(store, chunk, parsed):
            summary.warnings.extend((str(done.path), w) for w in done.warnings)
            if isinstance(done.stored, IngestFailure):
                summary.failures.append(done.stored)
            else:
                summary.results.append(done.stored)
        if progress is not None:
            progress(start + len(chunk), len(files))
    return summary
