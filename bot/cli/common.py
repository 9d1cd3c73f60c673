"""Shared pieces of the CLI commands."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, TextIO

from bot.core.query import Query, QueryError
from bot.core.query import parse as parse_query

Handler = Callable[[argparse.Namespace], Awaitable[int]]


class CliError(Exception):
    """A usage or lookup error shown to the user as one line, exit status 2."""


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    handler: Handler


def print_json_lines(objects: Iterable[Any], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    for obj in objects:
        out.write(json.dumps(obj, ensure_ascii=False, sort_keys=False) + "\n")


class ProgressBar:
    """A one-line progress bar, drawn only when the stream is a terminal."""

    WIDTH = 30
    MIN_ITEMS = 5

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.enabled = self.out.isatty()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total < self.MIN_ITEMS:
            return
        filled = self.WIDTH * done // total
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        self.out.write(f"\r[{bar}] {done}/{total}")
        if done == total:
            self.out.write("\n")
        self.out.flush()


def read_query(text: str) -> Query | None:
    """The query `text` says, or None once its error line is on stderr (the caller exits 2):
    the line alone, as the chat answers it, without the command's name in front."""
    try:
        return parse_query(text)
    except QueryError as exc:
        print(exc, file=sys.stderr)
        return None
