"""The command line: one table of subcommands, each in its own module."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from sqlalchemy.exc import SQLAlchemyError

from bot.cli import (
    cadence_cmd,
    config_cmd,
    digest_cmd,
    ingest_cmd,
    pr_cmd,
    query_cmd,
    reactivate_cmd,
    run_cmd,
    search_cmd,
    status_cmd,
    subscriptions_cmd,
    tags_cmd,
)
from bot.cli.common import CliError, Command
from bot.core.store.errors import is_outage
from bot.core.store.search.budget import QueryTooComplex, QueryTooSlow
from bot.core.store.sql.db import DatabaseURLError
from bot.service.context import DatabaseUnavailableError, driver_reason
from bot.settings import DEFAULT_DATABASE_URL, ConfigError

# What a shell reports for a program ended by SIGPIPE (128 + 13): `prdigest pr 1 | head -1`.
BROKEN_PIPE_STATUS = 141

COMMANDS: tuple[Command, ...] = (
    ingest_cmd.COMMAND,
    pr_cmd.COMMAND,
    digest_cmd.COMMAND,
    tags_cmd.COMMAND,
    search_cmd.COMMAND,
    query_cmd.COMMAND,
    run_cmd.COMMAND,
    status_cmd.COMMAND,
    reactivate_cmd.COMMAND,
    subscriptions_cmd.COMMAND,
    cadence_cmd.COMMAND,
    config_cmd.CHECK_CONFIG,
    config_cmd.SCHEMA,
    config_cmd.MIGRATE,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="prdigest",
        description="PR review reports as tag-view digests and /pr answers in Slack and Telegram.",
    )
    parser.add_argument("--version", action="version", version=f"prdigest {package_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        child = sub.add_parser(command.name, help=command.help, description=command.help)
        command.configure(child)
        child.set_defaults(handler=command.handler)
    return parser


def package_version() -> str:
    try:
        return version("prdigest")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def _quiet_stdout() -> None:
    """The reader of stdout went away (`| head -1`): send the rest to /dev/null, so the flush
    at exit raises nothing either (the recipe of Python's signal docs)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # a stdout without a file descriptor (a test's capture)
        pass


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status = int(asyncio.run(args.handler(args)))
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        _quiet_stdout()
        return BROKEN_PIPE_STATUS
    except (CliError, ConfigError, DatabaseURLError, DatabaseUnavailableError) as exc:
        print(f"prdigest {args.command}: {exc}", file=sys.stderr)
        return 2
    except (QueryTooSlow, QueryTooComplex) as exc:  # a query past its budget: not an outage
        print(f"prdigest {args.command}: {exc}; narrow the query", file=sys.stderr)
        return 2
    except SQLAlchemyError as exc:  # the database went away after it was opened
        if not is_outage(exc):
            raise
        url = os.environ.get("BOT_DATABASE_URL") or DEFAULT_DATABASE_URL
        print(
            f"prdigest {args.command}: the database stopped answering: {driver_reason(exc, url)}",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        return 130
