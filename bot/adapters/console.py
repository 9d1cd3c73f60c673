"""The console channel: prints digests to stdout (or appends them to a file), for `make run`,
for trying a config before pointing it at Slack, and for logs."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Mapping
from pathlib import Path

from bot.core.delivery.port import Outcome, Rejected, Sent, Transient, Turn, Withheld
from bot.core.models import Platform

SEPARATOR = "\n" + "─" * 72 + "\n"


class ConsoleSender:
    platform = Platform.CONSOLE
    max_per_second = 1000.0

    def __init__(self) -> None:
        self.count = 0

    def interval_for(self, target: str) -> float:
        return 0.0

    async def send(self, target: str, payload: Mapping[str, object], turn: Turn) -> Outcome:
        text = payload.get("text")
        if not isinstance(text, str):
            return Rejected("console payload has no text")
        if not await turn():
            return Withheld()
        self.count += 1
        block = text.rstrip("\n") + SEPARATOR
        if target in ("stdout", "-"):
            sys.stdout.write(block)
            sys.stdout.flush()
            return Sent(f"console-{self.count}")
        try:
            await asyncio.to_thread(_append, Path(target), block)
        except OSError as exc:
            return Transient(f"cannot write {target}: {exc.strerror}")
        return Sent(f"console-{self.count}")

    async def note(self, target: str, text: str) -> None:
        """One line for the person watching the console (not a message: not counted, not in
        the outbox), e.g. "nothing new since …; next digest …" after a restart."""
        line = text.rstrip("\n") + "\n"
        if target in ("stdout", "-"):
            sys.stdout.write(line)
            sys.stdout.flush()
            return
        with contextlib.suppress(OSError):  # the digests' own sends report an unwritable file
            await asyncio.to_thread(_append, Path(target), line)


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(text)
        out.flush()
