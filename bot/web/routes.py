"""The HTTP side: health, metrics, the report ingest API, and the platforms' webhooks.

Platform adapters contribute their own routes (`/slack/events`, `/telegram/webhook`), which
`build_web` mounts beside the rest.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from bot.adapters.http_body import BodyTooLargeError, read_capped
from bot.core.logs import log
from bot.core.reports.parse.parser import NotAReportError, ParseResult, parse_json, parse_markdown
from bot.core.reports.tags import TagRule
from bot.core.store.errors import is_outage
from bot.core.store.health import store_problem
from bot.core.store.ingest import MAX_REPORT_BYTES, off_loop_if_large
from bot.core.store.reports import IngestOutcome, IngestResult, ReportStore, StoreRejection
from bot.web.metrics import Metrics

logger = logging.getLogger("prdigest.web")

Lifespan = Callable[[Starlette], AbstractAsyncContextManager[None]]

MAX_BODY_BYTES = MAX_REPORT_BYTES
# What a client is told to wait when the store is unavailable (outage, SQLite lock past the
# busy timeout): 503 with this Retry-After.
RETRY_AFTER_SECONDS = 30
# Platform webhook requests (Slack's events, Telegram's updates) handled at once, per turn of
# the event loop; the others wait their turn, costing the loop nothing meanwhile. Under a
# flood of them the loop then serves a few per turn, so `/healthz`, `/readyz` and `/metrics`
# wait behind a few requests' work, not behind hundreds: probes stay prompt while the
# webhooks are saturated.
MAX_PLATFORM_REQUESTS_AT_ONCE = 4
MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown", "text/plain"})
JSON_TYPES = frozenset({"application/json"})


def _too_large() -> JSONResponse:
    response = _error(413, f"report larger than {MAX_BODY_BYTES // (1024 * 1024)} MB")
    response.headers["Connection"] = "close"  # the rest of an undrained body is not waited for
    return response


@dataclass
class WebDeps:
    store: ReportStore
    metrics: Metrics
    rules: tuple[TagRule, ...]
    ingest_token: str | None
    is_ready: Callable[[], bool]


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _unavailable(error: BaseException | str) -> JSONResponse:
    reason = error if isinstance(error, str) else type(error).__name__
    log(logger, "store.unavailable", logging.WARNING, via="api", error=reason)
    response = _error(503, "the report store is unavailable; try again later")
    response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def _authorized(request: Request, token: str) -> bool:
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())


def ingest_endpoint(deps: WebDeps) -> Callable[[Request], Any]:
    async def post_report(request: Request) -> Response:
        if deps.ingest_token is None:
            return _error(503, "the ingest API is off: set BOT_INGEST_TOKEN to turn it on")
        if not _authorized(request, deps.ingest_token):
            return _error(401, "missing or wrong bearer token")
        media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media not in MARKDOWN_TYPES | JSON_TYPES:
            return _error(415, "send text/markdown or application/json")
        try:
            body = await read_capped(request, MAX_BODY_BYTES)
        except BodyTooLargeError:
            return _too_large()
        problem = await store_problem(deps.store.engine)
        if problem is not None:
            return _unavailable(problem)
        try:
            decoded = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _error(400, f"body is not UTF-8 (byte {exc.start})")
        try:
            parsed = await _parse(decoded, media, deps.rules, len(body))
        except NotAReportError as exc:
            deps.metrics.reports_ingested.labels("failed").inc()
            return _error(422, exc.reason)
        try:
            outcome = (await deps.store.upsert_each([(parsed.report, "api")]))[0]
        except Exception as error:  # an outage is a 503; anything else stays a bug (500)
            if not is_outage(error):
                raise
            return _unavailable(error)
        if isinstance(outcome, StoreRejection):
            deps.metrics.reports_ingested.labels("failed").inc()
            return _error(422, outcome.reason)
        return _stored(deps, outcome, parsed.warnings)

    return post_report


async def _parse(text: str, media: str, rules: tuple[TagRule, ...], size: int) -> ParseResult:
    parse = parse_json if media in JSON_TYPES else parse_markdown
    return await off_loop_if_large(size, lambda: parse(text, "request body", rules))


def _stored(deps: WebDeps, result: IngestResult, warnings: list[str]) -> Response:
    deps.metrics.reports_ingested.labels(result.outcome.value).inc()
    log(logger, "report.ingested", ref=result.ref, outcome=result.outcome.value, via="api")
    status = 201 if result.outcome is IngestOutcome.NEW else 200
    return JSONResponse(
        {
            "ref": result.ref,
            "outcome": result.outcome.value,
            "seq": result.seq,
            "revision": result.revision,
            "warnings": warnings,
        },
        status_code=status,
    )


def one_turn_at_a_time(
    routes: Sequence[BaseRoute], at_once: int = MAX_PLATFORM_REQUESTS_AT_ONCE
) -> list[BaseRoute]:
    """`routes` with their endpoints sharing one bound of `at_once` requests handled at a
    time (see MAX_PLATFORM_REQUESTS_AT_ONCE); other kinds of route pass unchanged.

    A request takes its turn, then yields once before its work: most requests (a body that
    has arrived, an ack, a "busy") never suspend, so without that yield each would run whole
    within the step that took the turn and give it back at once, the bound would never make
    anyone wait, and one turn of the loop would serve every request that arrived, hundreds
    under a flood, ahead of a probe's few steps."""
    turns = asyncio.Semaphore(at_once)

    def gated(endpoint: Callable[[Request], Awaitable[Response]]) -> Callable[..., Any]:
        async def in_turn(request: Request) -> Response:
            async with turns:
                await asyncio.sleep(0)  # the others queue behind this turn until the next
                return await endpoint(request)

        return in_turn

    return [
        Route(r.path, gated(r.endpoint), methods=r.methods, name=r.name)
        if isinstance(r, Route)
        else r
        for r in routes
    ]


def build_web(
    deps: WebDeps,
    platform_routes: Sequence[BaseRoute] = (),
    lifespan: Lifespan | None = None,
) -> Starlette:
    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    async def readyz(request: Request) -> Response:
        problem = await store_problem(deps.store.engine)
        if problem is not None:
            return _error(503, f"store {problem}")
        if not deps.is_ready():
            return _error(503, "scheduler not running")
        return PlainTextResponse("ready")

    async def metrics(request: Request) -> Response:
        return Response(deps.metrics.render(), media_type="text/plain; version=0.0.4")

    routes: list[BaseRoute] = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/api/reports", ingest_endpoint(deps), methods=["POST"]),
        *one_turn_at_a_time(platform_routes),
    ]
    return Starlette(routes=routes, lifespan=lifespan)
