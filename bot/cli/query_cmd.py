"""`prdigest query test QUERY [PATH...]`: which reports a query matches, and by which terms.

The query's counterpart of `tags test`. With PATHs, the report files (or directories) given;
without, every stored report, in ingest order. Bare words are tested as text, as `search` reads
them; a last line names those that are also tags (a tag rule's, or a report's read here) and
the query as `subscribe` would save it. Time terms (`since:`, `before:`) read a report's
merged time, else, for a stored report, when the store first saw it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.cli.common import Command, print_json_lines, read_query
from bot.core import clock
from bot.core.query import Query, explain, matches, unparse
from bot.core.query.known_tags import bare_words, read_known_tags
from bot.core.query.reading import tag_text
from bot.core.reports.model import Report
from bot.core.store.ingest import IngestFailure, expand_paths, parse_one
from bot.service.context import load, open_context, tag_rules
from bot.settings import BotConfig


@dataclass(frozen=True, slots=True)
class _Item:
    report: Report
    seen_at: datetime | None


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["test"], help="test: show which reports match")
    parser.add_argument("query", metavar="QUERY", help="e.g. 'tag:rollout -tag:ci 权重'")
    parser.add_argument(
        "paths", nargs="*", type=Path, metavar="PATH", help="report files or dirs; none: the store"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", dest="fmt")
    parser.add_argument("--matching", action="store_true", help="print only the reports that match")


async def _handle(args: argparse.Namespace) -> int:
    if (query := read_query(args.query)) is None:
        return 2
    now = clock.utc_clock()
    failures: list[IngestFailure] = []
    total = matched = 0
    _, config = load()
    tags = set(config.rule_tags())  # the known tags: the rules', and the reports' read here
    async for item in _items(args.paths, config, failures):
        total += 1
        tags.update(tag_text(tag) for tag in item.report.tags)
        found = matches(query, item.report, seen_at=item.seen_at, now=now)
        matched += found
        if found or not args.matching:
            _show(args.fmt, query, item, found, now)
    for failure in failures:
        print(f"error: {failure.source}: {failure.reason}", file=sys.stderr)
    if args.fmt == "text":
        print(f"{matched} of {total} report{'' if total == 1 else 's'} match {args.query!r}")
        if (hint := _tags_hint(query, tags)) is not None:
            print(hint)
    return 1 if failures else 0


def _tags_hint(query: Query, tags: set[str]) -> str | None:
    """The bare words tested as text that are also known tags, and the query as `subscribe`
    would read them; None when there are none."""
    words = [word for word in bare_words(query) if word in tags]
    if not words:
        return None
    read = unparse(read_known_tags(query, words))
    what = "a tag" if len(words) == 1 else "tags"
    return f"({', '.join(words)}: {what} too, tested here as text; subscribe reads {read!r})"


def _show(fmt: str, query: Query, item: _Item, found: bool, now: datetime) -> None:
    report = item.report
    terms = explain(query, report, seen_at=item.seen_at, now=now) if found else []
    if fmt == "json":
        line: dict[str, Any] = {
            "repo": report.repo,
            "number": report.number,
            "title": report.title,
            "match": found,
            "matched": terms,
        }
        print_json_lines([line])
    elif found:
        print(f"MATCH     {report.ref}  {report.title}  ({'; '.join(terms)})")
    else:
        print(f"no match  {report.ref}  {report.title}")


async def _items(
    paths: list[Path], config: BotConfig, failures: list[IngestFailure]
) -> AsyncIterator[_Item]:
    if paths:
        for item in _files(paths, config, failures):
            yield item
        return
    async for item in _stored():
        yield item


def _files(paths: list[Path], config: BotConfig, failures: list[IngestFailure]) -> Iterator[_Item]:
    rules = tag_rules(config)
    files, missing = expand_paths(paths)
    failures.extend(missing)
    for path in files:
        parsed = parse_one(path, rules)
        if isinstance(parsed, IngestFailure):
            failures.append(parsed)
        else:
            yield _Item(parsed.report, None)


async def _stored() -> AsyncIterator[_Item]:
    """Every stored report with when it was first seen, a chunk at a time."""
    async with open_context(create=False) as ctx:
        async for report, seen_at in ctx.reports.each():
            yield _Item(report, seen_at)


COMMAND = Command(
    "query",
    "test a search query: query test QUERY [PATH ...] (none: the stored reports)",
    _configure,
    _handle,
)
