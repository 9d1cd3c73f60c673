"""Report sources polled by the scheduler: a directory, or a URL.

A directory is rescanned on each poll; files whose size or mtime changed are parsed and
ingested (the store ignores identical content). A URL serves one report or a JSON list of report
URLs and is fetched with ETag / If-Modified-Since. A bad file or URL is logged once per distinct
problem, not on every poll.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

import httpx

from bot.core.ingest import IngestFailure, expand_paths, parse_one
from bot.core.reports.model import Report
from bot.core.reports.parser import NotAReportError, parse_bytes
from bot.core.reports.tags import TagRule
from bot.core.store.reports import IngestOutcome, IngestResult, ReportStore
from bot.logs import log
from bot.settings import Source

logger = logging.getLogger("prdigest.sources")

MAX_REPORT_BYTES = 2 * 1024 * 1024
FETCH_TIMEOUT = httpx.Timeout(20.0)
MAX_LISTED_URLS = 1000


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
        files, _ = expand_paths([self.source.dir])
        result = PollResult()
        batch: list[tuple[Report, str]] = []
        for path in files:
            stat = path.stat()
            signature = (stat.st_size, stat.st_mtime_ns)
            if self.seen.get(str(path)) == signature:
                continue
            parsed = parse_one(path, self.rules)
            self.seen[str(path)] = signature
            if isinstance(parsed, IngestFailure):
                result.failures.append(parsed)
            else:
                self.reported.pop(str(path), None)
                batch.append((parsed.report, str(path)))
        if batch:
            result.results.extend(await self.store.upsert_many(batch))
        return result

    async def _poll_url(self) -> PollResult:
        assert self.source.url is not None
        result = PollResult()
        async with httpx.AsyncClient(timeout=FETCH_TIMEOUT, follow_redirects=True) as client:
            body = await self._fetch(client, self.source.url, result)
            if body is None:
                return result
            listed = _listed_urls(body)
            if listed is None:
                await self._ingest_body(self.source.url, body, result)
                return result
            for url in listed[:MAX_LISTED_URLS]:
                item = await self._fetch(client, url, result)
                if item is not None:
                    await self._ingest_body(url, item, result)
        return result

    async def _fetch(self, client: httpx.AsyncClient, url: str, result: PollResult) -> bytes | None:
        """The body if it changed since the last poll; None if unchanged or failed."""
        try:
            response = await client.get(url, headers=self.validators.get(url, {}))
        except httpx.HTTPError as exc:
            result.failures.append(IngestFailure(url, f"fetch failed: {type(exc).__name__}"))
            return None
        if response.status_code == 304:
            return None
        if response.status_code != 200:
            result.failures.append(IngestFailure(url, f"HTTP {response.status_code}"))
            return None
        if len(response.content) > MAX_REPORT_BYTES:
            result.failures.append(IngestFailure(url, "larger than 2 MB"))
            return None
        validators = {}
        if etag := response.headers.get("etag"):
            validators["If-None-Match"] = etag
        if modified := response.headers.get("last-modified"):
            validators["If-Modified-Since"] = modified
        self.validators[url] = validators
        return response.content

    async def _ingest_body(self, url: str, body: bytes, result: PollResult) -> None:
        try:
            parsed = parse_bytes(body, url, self.rules)
        except NotAReportError as exc:
            result.failures.append(IngestFailure(url, exc.reason))
            return
        self.reported.pop(url, None)
        result.results.append(await self.store.upsert(parsed.report, url))


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
