"""Helpers for the answer tests (no tests here): a report too big for a few messages, and a
store that cannot be reached."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.chat.answers import Chat
from bot.core.models import Locale, Platform
from bot.core.reports.model import Report
from bot.core.reports.parse.parser import parse_file
from tests.kits.paths import SEED

HUGE_NUMBER = 9001
HUGE_LINES = 3000  # about 130 KB of implementation notes: dozens of messages on any platform


def huge_report() -> Report:
    """The seed report renumbered, with thousands of implementation lines."""
    seed = parse_file(SEED).report
    steps = "\n".join(
        f"{n}. Step {n}: move the loader's fallback into the worker and check it again."
        for n in range(1, HUGE_LINES + 1)
    )
    return seed.model_copy(
        update={
            "number": HUGE_NUMBER,
            "url": f"https://github.com/{seed.repo}/pull/{HUGE_NUMBER}",
            "implementation": steps,
        }
    )


async def break_store(engine: AsyncEngine, database: Path) -> None:
    """Every later connection fails: the pool is closed and the SQLite file's path becomes a
    directory ("unable to open database file"), as when the database is out."""
    await engine.dispose()
    for suffix in ("", "-wal", "-shm", "-journal"):
        path = Path(f"{database}{suffix}")
        if path.exists():
            path.unlink()
    os.mkdir(database)


def private_chat() -> Chat:
    """A Telegram private chat, asked by its one member, who may change its subscription."""

    async def is_admin() -> bool:
        return True

    return Chat(
        Platform.TELEGRAM, "4242", "4242", is_admin, Locale.EN, user_name="mallory", private=True
    )
