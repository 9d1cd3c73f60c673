"""What every command needs: environment, config, database, stores. Opened once per process.

A database that cannot be opened is one line naming it (password masked) and the driver's
reason: `DatabaseUnavailableError`. Commands that only read (`status`, `pr`, `digest`) open an
existing SQLite file and never create an empty one where they happen to stand.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError, StatementError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.reports.tags import TagRule
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import MASK, async_url, create_engine, masked_url, migrate, url_password
from bot.settings import BotConfig, Env, load_config

DATABASE_VARIABLE = "BOT_DATABASE_URL"
# The part of psycopg's message that repeats what the URL already says.
_PG_PREFIX = re.compile(
    r'^(connection failed: )?(connection to server at "[^"]*"( \([^)]*\))?, port \d+ failed: )?'
    r"(FATAL: +)?"
)


class DatabaseUnavailableError(Exception):
    """The database cannot be opened: shown to the user as one line, exit status 2."""


@dataclass(frozen=True)
class Context:
    env: Env
    config: BotConfig
    engine: AsyncEngine
    reports: ReportStore

    @property
    def tag_rules(self) -> tuple[TagRule, ...]:
        return tag_rules(self.config)


def tag_rules(config: BotConfig) -> tuple[TagRule, ...]:
    return tuple(TagRule(paths=tuple(rule.paths), tag=rule.tag) for rule in config.tag_rules)


def load(env: Env | None = None) -> tuple[Env, BotConfig]:
    env = env or Env.from_environ()
    return env, load_config(env.config_path)


def sqlite_path(url: str) -> Path | None:
    """The file a SQLite URL names; None for PostgreSQL and in-memory SQLite."""
    parsed = make_url(async_url(url))
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(str(parsed.database))


def missing_database(url: str) -> str | None:
    """Why a read-only command has nothing to read: the SQLite file does not exist."""
    path = sqlite_path(url)
    if path is None or path.exists():
        return None
    where = "" if path.is_absolute() else f", relative to {Path.cwd()}"
    return (
        f"no database at {path} ({DATABASE_VARIABLE}{where}); "
        "run `prdigest ingest` or `make run` first"
    )


def driver_reason(error: BaseException, url: str) -> str:
    """The driver's one-line reason, without what the URL already says or its password."""
    cause: BaseException = error
    if isinstance(error, StatementError) and error.orig is not None:
        cause = error.orig
    if isinstance(cause, OSError) and cause.strerror:
        target = f"{cause.filename}: " if cause.filename else ""
        reason = f"{target}{cause.strerror}"
    else:
        lines = str(cause).strip().splitlines()
        reason = _PG_PREFIX.sub("", lines[0].strip()) if lines else type(cause).__name__
    if password := url_password(url):
        reason = reason.replace(password, MASK)
    return " ".join(reason.split()) or type(cause).__name__


def unavailable(error: BaseException, url: str) -> DatabaseUnavailableError:
    return DatabaseUnavailableError(
        f"cannot open the database {masked_url(url)}: {driver_reason(error, url)}"
    )


@asynccontextmanager
async def open_context(env: Env | None = None, create: bool = True) -> AsyncIterator[Context]:
    """Load config, open the database and apply migrations. With `create=False` a SQLite file
    that does not exist yet is an error instead of a new empty database."""
    env, config = load(env)
    if not create and (missing := missing_database(env.database_url)):
        raise DatabaseUnavailableError(missing)
    try:
        engine = create_engine(env.database_url)
    except OSError as exc:  # the SQLite file's directory cannot be created
        reason = f"cannot create the directory {exc.filename}: {exc.strerror}"
        raise DatabaseUnavailableError(
            f"cannot open the database {masked_url(env.database_url)}: {reason}"
        ) from None
    try:
        try:
            await migrate(engine)
        except (SQLAlchemyError, OSError) as exc:
            raise unavailable(exc, env.database_url) from None
        yield Context(env=env, config=config, engine=engine, reports=ReportStore(engine))
    finally:
        await engine.dispose()


def database_line(env: Env) -> str:
    """`database: URL` as `status` prints it (password masked; a relative SQLite path is
    said relative to where the command runs)."""
    path = sqlite_path(env.database_url)
    where = f" (in {os.getcwd()})" if path is not None and not path.is_absolute() else ""
    return f"database: {masked_url(env.database_url)}{where}"
