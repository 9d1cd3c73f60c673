"""`prdigest search QUERY [--format text|json] [--limit N]`: the stored reports a query finds,
best first, as the chats' `/find` answers.

Text: one line per PR (`repo#number`, ★ for must-read, title, one-liner, impact), then "+N more"
with the query echoed past the limit; `--locale` picks the words (default: the config's).
JSON: one object per result line (repo, number, title, score, url, impact, recommendation,
exact), best first. A query error is its one line on stderr, exit 2. Read-only: a store that
does not exist yet is an error, never created.
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from bot.cli.common import Command, print_json_lines, read_query
from bot.core import clock
from bot.core.models import Locale
from bot.core.render.labels import notice_text
from bot.core.render.results import narrower, result_notice
from bot.core.store.finder.search import Hit, search
from bot.service.context import open_context

DEFAULT_LIMIT = 10


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "query", metavar="QUERY", help="e.g. 权重, 'file:*rollout* impact>=medium', 'risk:FP8'"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", dest="fmt")
    parser.add_argument(
        "--limit",
        type=_limit,
        default=DEFAULT_LIMIT,
        help=f"results shown (default {DEFAULT_LIMIT})",
    )
    parser.add_argument(
        "--locale",
        choices=[locale.value for locale in Locale],
        help="language of the text lines; default: the config's `locale` (zh unless set)",
    )


def _json(hit: Hit) -> dict[str, Any]:
    report = hit.report
    return {
        "repo": report.repo,
        "number": report.number,
        "title": report.title,
        "score": hit.score,
        "url": report.url,
        "impact": report.impact_level.value if report.impact_level else None,
        "recommendation": report.recommendation_level.value,
        "exact": list(hit.exact),
    }


async def _handle(args: argparse.Namespace) -> int:
    if (query := read_query(args.query)) is None:
        return 2
    async with open_context(create=False) as ctx:
        budget = ctx.config.search.timeout_seconds
        now = clock.utc_clock()
        result = await search(ctx.reports, query, limit=args.limit, now=now, seconds=budget)
        locale = Locale(args.locale) if args.locale else ctx.config.locale
    if args.fmt == "json":
        print_json_lines(_json(hit) for hit in result.hits)
        return 0
    typed = " ".join(args.query.split())
    example = f"prdigest search {shlex.quote(narrower(typed))}"
    hits = [hit.report for hit in result.hits]
    key, params = result_notice(
        hits, result.total, typed, locale, command=example, capped=result.capped
    )
    print(notice_text(key, locale, params))
    return 0


COMMAND = Command(
    "search",
    "find stored reports: search QUERY (words, tag:, repo:, risk:, impact>=, file:, since:…)",
    _configure,
    _handle,
)
