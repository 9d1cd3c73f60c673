"""`prdigest ingest PATH...`"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bot.cli.common import Command, ProgressBar
from bot.core.store.ingest import ingest_paths
from bot.service.context import open_context


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="report files or dirs")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the summary")


async def _handle(args: argparse.Namespace) -> int:
    async with open_context() as ctx:
        summary = await ingest_paths(ctx.reports, args.paths, ctx.tag_rules, ProgressBar())
    if not args.quiet:
        for result in summary.results:
            print(
                f"{result.outcome.value:9} {result.ref} (seq {result.seq}, rev {result.revision})"
            )
        for source, warning in summary.warnings:
            print(f"warning: {source}: {warning}", file=sys.stderr)
    for failure in summary.failures:
        print(f"error: {failure.source}: {failure.reason}", file=sys.stderr)
    print(summary.line)
    return 1 if summary.failures else 0


COMMAND = Command(
    "ingest",
    "parse report files/directories (.md, .txt, .json) into the store",
    _configure,
    _handle,
)
