"""`prdigest tags test [TITLE ...]`: the tags a title gives, one JSON line each."""

from __future__ import annotations

import argparse
import sys

from bot.cli.common import Command, print_json_lines
from bot.core.reports.tags import derive_tags
from bot.service.context import load, tag_rules


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["test"], help="test: show the tags of titles")
    parser.add_argument("titles", nargs="*", metavar="TITLE", help="titles; none: read stdin")
    parser.add_argument(
        "--path", action="append", default=[], help="a key-file path, for the config's tag_rules"
    )


async def _handle(args: argparse.Namespace) -> int:
    _, config = load()
    rules = tag_rules(config)
    titles = args.titles or [line.rstrip("\r\n") for line in sys.stdin if line.strip()]
    print_json_lines(
        {"title": title, "tags": derive_tags(title, args.path, rules)} for title in titles
    )
    return 0


COMMAND = Command(
    "tags",
    "derive tags from PR titles: tags test [TITLE ...] (none: read stdin)",
    _configure,
    _handle,
)
