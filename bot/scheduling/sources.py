"""Report sources polled by the scheduler: a directory, or a URL.

A directory is rescanned on each poll; files whose size or mtime changed are parsed (in a
worker thread, in batches) and ingested (the store ignores identical content). A URL serves one
report or a JSON list of report URLs and is fetched with ETag / If-Modified-Since. A bad file or
URL is logged once per distinct problem, not on every poll.

A file (or URL) is remembered as seen only once it is stored or rejected: if the store is
unavailable during a poll, the next poll tries the same files again. One bad file never keeps
the others of its poll out of the store (see `ReportStore.upsert_each`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bot.core.logs import log
from bot.core.reports.tags import TagRule
from bot.core.store.ingest import (
    BATCH_SIZE,
    MAX_REPORT_BYTES,
    TOO_LARGE,
    IngestFailure,
    expand_paths,
    off_loop_if_large,
    parse_data,
    parse_many,
    store_parsed,
    stored_or_failure,
)
from bot.core.store.reports import IngestOutcome, IngestResult, ReportStore
from bot.settings import Source

logger = logging.getLogger("prdigest.sources")

FETCH_TIMEOUT = httpx.Timeout(20.0)
MAX_LISTED_URLS = 1000

Signature = tuple[int, int]  # a file's size and mtime (ns)
Fetched = tuple[bytes, dict[str, str]]  # a body and the validators to send next time


@dataclass
class PollResult:
    results: list[IngestResult] = field(default_factory=list)
    failures: list[IngestFailure] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return sum(1 for r in self.results if r.outcome is not IngestOutcome.UNCHANGED)


class SourcePoller:
    """Polls one configured source; remembers what it saw so polls are cheap and quiet."""

    def __init__(self, source: Source, store: ReportStore, rules: tuple[TagRule, ...]) -> None:
        self.source = source
        self.store = store
        self.rules = rules
        self.seen: dict[str, tuple[int, int]] = {}
        self.reported: dict[str, str] = {}
        self.validators: dict[str, dict[str, str]] = {}

    @property
    def name(self) -> str:
        return str(self.source.dir or self.source.url)

    async def poll(self) -> PollResult:
        result = await (self._poll_dir() if self.source.dir is not None else self._poll_url())
        for failure in result.failures:
            self._report_once(failure)
        if result.changed:
            log(logger, "source.ingested", source=self.name, changed=result.changed)
        return result

    def _report_once(self, failure: IngestFailure) -> None:
        if self.reported.get(failure.source) == failure.reason:
            return
        self.reported[failure.source] = failure.reason
        log(
            logger,
            "source.bad_report",
            logging.WARNING,
            source=failure.source,
            reason=failure.reason,
        )

    async def _poll_dir(self) -> PollResult:
        assert self.source.dir is not None
        if not self.source.dir.is_dir():
            return PollResult(failures=[IngestFailure(str(self.source.dir), "not a directory")])
        changed = await asyncio.to_thread(_changed_files, self.source.dir, dict(self.seen))
        result = PollResult()
        for start in range(0, len(changed), BATCH_SIZE):
            await self._ingest_files(changed[start : start + BATCH_SIZE], result)
        return result

    async def _ingest_files(self, chunk: list[tuple[Path, Signature]], result: PollResult) -> None:
        """Parse a batch of files off the event loop and store it; remember each file once it
        is stored or rejected (an outage raises before any file it was writing is remembered)."""
        paths = [path for path, _ in chunk]
        parsed = await asyncio.to_thread(parse_many, paths, self.rules)
        for (path, signature), item in zip(chunk, parsed, strict=True):
            if isinstance(item, IngestFailure):  # rejected: known even if the write fails
                self.seen[str(path)] = signature
                result.failures.append(item)
        outcomes = await store_parsed(self.store, paths, parsed)
        for (path, signature), item, done in zip(chunk, parsed, outcomes, strict=True):
            if not isinstance(item, IngestFailure):
                self.seen[str(path)] = signature
                self._record(str(path), done.stored, result)

    def _record(self, name: str, stored: IngestResult | IngestFailure, result: PollResult) -> None:
        if isinstance(stored, IngestFailure):
            result.failures.append(stored)
        else:
            self.reported.pop(name, None)
            result.results.append(stored)

    async def _poll_url(self) -> PollResult:
        assert self.source.url is not None
        result = PollResult()
        async with httpx.AsyncClient(timeout=FETCH_TIMEOUT, follow_redirects=True) as client:
            fetched = await self._fetch(client, self.source.url, result)
            if fetched is None:
                return result
            listed = _listed_urls(fetched[0])
            if listed is None:
                await self._ingest_body(self.source.url, fetched, result)
                return result
            for url in listed[:MAX_LISTED_URLS]:
                item = await self._fetch(client, url, result)
                if item is not None:
                    await self._ingest_body(url, item, result)
            self.validators[self.source.url] = fetched[1]
        return result

    async def _fetch(
        self, client: httpx.AsyncClient, url: str, result: PollResult
    ) -> Fetched | None:
        """The body (read up to the 2 MB cap) if it changed since the last poll, with the
        validators to remember once it is handled; None if unchanged or failed."""
        try:
            async with client.stream("GET", url, headers=self.validators.get(url, {})) as response:
                if response.status_code == 304:
                    return None
                if response.status_code != 200:
                    result.failures.append(IngestFailure(url, f"HTTP {response.status_code}"))
                    return None
                body = await _read_capped(response)
        except httpx.HTTPError as exc:
            result.failures.append(IngestFailure(url, f"fetch failed: {type(exc).__name__}"))
            return None
        if body is None:
            result.failures.append(IngestFailure(url, TOO_LARGE))
            return None
        validators = {}
        if etag := response.headers.get("etag"):
            validators["If-None-Match"] = etag
        if modified := response.headers.get("last-modified"):
            validators["If-Modified-Since"] = modified
        return body, validators

    async def _ingest_body(self, url: str, fetched: Fetched, result: PollResult) -> None:
        body, validators = fetched
        parsed = await off_loop_if_large(len(body), lambda: parse_data(body, url, self.rules))
        if isinstance(parsed, IngestFailure):
            result.failures.append(parsed)
        else:
            [outcome] = await self.store.upsert_each([(parsed.report, url)])
            self._record(url, stored_or_failure(outcome, url), result)
        self.validators[url] = validators  # only now: stored or rejected


async def _read_capped(response: httpx.Response) -> bytes | None:
    """The body, or None as soon as it passes MAX_REPORT_BYTES."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and len(declared) < 20 and int(declared) > MAX_REPORT_BYTES:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_REPORT_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _changed_files(directory: Path, seen: dict[str, Signature]) -> list[tuple[Path, Signature]]:
    """Report files under `directory` whose size or mtime is not what `seen` remembers."""
    files, _ = expand_paths([directory])
    changed: list[tuple[Path, Signature]] = []
    for path in files:
        try:
            stat = path.stat()
        except OSError:  # removed since it was listed
            continue
        signature = (stat.st_size, stat.st_mtime_ns)
        if seen.get(str(path)) != signature:
            changed.append((path, signature))
    return changed


def _listed_urls(body: bytes) -> list[str] | None:
    """A JSON list of URLs (an index of reports), or None if the body is something else."""
    stripped = body.lstrip()
    if not stripped.startswith(b"["):
        return None
    try:
        data = json.loads(stripped)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(data, list) and all(isinstance(u, str) for u in data):
        return [u for u in data if u.startswith(("http://", "https://"))]
    return None


def make_pollers(
    sources: list[Source], store: ReportStore, rules: tuple[TagRule, ...]
) -> list[SourcePoller]:
    return [SourcePoller(source, store, rules) for source in sources]
