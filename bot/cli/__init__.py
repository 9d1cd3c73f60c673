"""The command line: one table of subcommands, each in its own module."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from bot.cli import (
    config_cmd,
    digest_cmd,
    ingest_cmd,
    pr_cmd,
    reactivate_cmd,
    run_cmd,
    status_cmd,
    tags_cmd,
)
from bot.cli.common import CliError, Command
from bot.core.store.db import DatabaseURLError
from bot.settings import ConfigError

COMMANDS: tuple[Command, ...] = (
    ingest_cmd.COMMAND,
    pr_cmd.COMMAND,
    digest_cmd.COMMAND,
    tags_cmd.COMMAND,
    run_cmd.COMMAND,
    status_cmd.COMMAND,
    reactivate_cmd.COMMAND,
    config_cmd.CHECK_CONFIG,
    config_cmd.SCHEMA,
    config_cmd.MIGRATE,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="prdigest",
        description="PR review reports as tag-view digests and /pr answers in Slack and Telegram.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        child = sub.add_parser(command.name, help=command.help, description=command.help)
        command.configure(child)
        child.set_defaults(handler=command.handler)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(asyncio.run(args.handler(args)))
    except (CliError, ConfigError, DatabaseURLError) as exc:
        print(f"prdigest {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
