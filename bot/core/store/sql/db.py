"""Engine creation and migrations for SQLite (embedded default) and PostgreSQL (replicas).

SQLite runs in WAL mode with a busy timeout, and write transactions open with
`BEGIN IMMEDIATE` so two writers queue instead of failing on a read→write upgrade.
Migrations run on start; on PostgreSQL an advisory lock makes three replicas starting at once
apply them one after the other.
"""

from __future__ import annotations

import asyncio
import json
import re
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import (
    Column,
    Connection,
    Table,
    event,
    text,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from bot.core.query.reading import GLOB_FUNCTION, glob_holds

MIGRATIONS_DIR = Path(__file__).resolve().parents[3] / "migrations"
SQLITE_BUSY_TIMEOUT_MS = 15_000
MIGRATION_LOCK_KEY = 0x70726467  # "prdg": the advisory lock id for migrations
IMMEDIATE = "prdigest_immediate"
POSTGRES_SCHEMES = ("postgresql", "postgres")  # libpq and many hosts spell it postgres://


class DatabaseURLError(ValueError):
    """BOT_DATABASE_URL names no database prdigest can use."""


# `scheme://user:PASSWORD@host`: everything up to the last "@" (a password may hold one), and
# `password=` in the query string. By hand, because a malformed URL is exactly the one
# SQLAlchemy cannot parse (and so cannot hide the password of).
_USERINFO_PASSWORD = re.compile(r"(://[^:/?#@]*:)[^/?#]*@|(://[^:/?#@]*:).*@")
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)
MASK = "***"


def masked_url(url: str) -> str:
    """The URL with any password replaced by ***: for every message, log line and status."""
    masked = _USERINFO_PASSWORD.sub(lambda m: f"{m.group(1) or m.group(2)}{MASK}@", url, count=1)
    if "://" not in masked and "@" in masked:  # no scheme: whatever precedes the host may be one
        masked = f"{MASK}@{masked.rsplit('@', 1)[1]}"
    return _QUERY_PASSWORD.sub(lambda m: f"{m.group(1)}{MASK}", masked)


def url_password(url: str) -> str | None:
    """The password a database URL carries, if it parses: one more secret the log redacts."""
    try:
        password = make_url(url).password
    except (ArgumentError, ValueError):
        return None
    return str(password) if password else None


def async_url(url: str) -> str:
    """Map the documented URL forms to their async drivers: `sqlite:///path`, and
    `postgresql://`, `postgresql+psycopg://` or `postgres://` (Heroku's, libpq's spelling)."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise DatabaseURLError(
            f"BOT_DATABASE_URL {masked_url(url)!r} is not a database URL"
        ) from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    elif backend in POSTGRES_SCHEMES:
        parsed = parsed.set(drivername="postgresql+psycopg")
    else:
        raise DatabaseURLError(
            f"BOT_DATABASE_URL uses {backend!r}; prdigest supports sqlite and postgresql"
        )
    return parsed.render_as_string(hide_password=False)


def is_sqlite(engine: AsyncEngine) -> bool:
    return engine.dialect.name == "sqlite"


def _install_sqlite_hooks(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Hand transaction control to SQLAlchemy's "begin" hook below.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()
        # `file:` globs in compiled queries (store/search/compile.py), matched as the
        # evaluator matches them.
        dbapi_connection.create_function(GLOB_FUNCTION, 2, glob_holds, deterministic=True)

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Connection) -> None:
        immediate = connection.get_execution_options().get(IMMEDIATE, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def json_encoded(value: Any) -> bytes | str:
    """A JSON column's stored text, by orjson (a tick serializes a hundred megabytes of
    message payloads: five times json's pace) as UTF-8 bytes, so a Chinese character takes
    three bytes, not a six-character escape. What orjson refuses (a lone surrogate, which
    UTF-8 cannot carry; an integer past 64 bits) is written by json, with escapes, as text.
    Bytes go to PostgreSQL as they are (psycopg takes either): decoding them here only for
    the driver to encode them again is twice the work on a tick's 150 MB of payloads."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return json.dumps(value)


def json_text(value: Any) -> str:
    """`json_encoded` as text: what SQLite binds as TEXT (bytes would be a BLOB)."""
    encoded = json_encoded(value)
    return encoded if isinstance(encoded, str) else encoded.decode()


# Read by json: orjson reads big integers as floats.
SQLITE_JSON = {"json_serializer": json_text}
POSTGRES_JSON = {"json_serializer": json_encoded}


def create_engine(url: str) -> AsyncEngine:
    """An AsyncEngine for `url`; creates the SQLite file's directory on first use."""
    driver_url = async_url(url)
    parsed = make_url(driver_url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(driver_url, connect_args={"timeout": 30}, **SQLITE_JSON)
        _install_sqlite_hooks(engine)
        return engine
    return create_async_engine(
        driver_url, pool_pre_ping=True, pool_size=5, max_overflow=10, **POSTGRES_JSON
    )


_sqlite_writers: weakref.WeakKeyDictionary[AsyncEngine, asyncio.Lock] = weakref.WeakKeyDictionary()


def dialect_insert(conn: AsyncConnection, table: Table) -> Any:
    """An INSERT that knows ON CONFLICT (PostgreSQL's or SQLite's)."""
    return (pg_insert if conn.dialect.name == "postgresql" else sqlite_insert)(table)


async def insert_ignore(
    conn: AsyncConnection, table: Table, values: dict[str, Any], returning: Column[Any]
) -> Any | None:
    """Insert unless a unique key is taken; `returning` of the new row, or None. (RETURNING,
    not rowcount: that is not reliable for ON CONFLICT DO NOTHING across drivers.)"""
    statement = (
        dialect_insert(conn, table).values(**values).on_conflict_do_nothing().returning(returning)
    )
    return (await conn.execute(statement)).scalar()


@asynccontextmanager
async def write_transaction(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A transaction that intends to write: `BEGIN IMMEDIATE` on SQLite.

    On SQLite the writers of one process also queue on an asyncio lock first: SQLite's busy
    handler lets waiting writers poll with sleeps of up to 100 ms in no particular order,
    which under a steady stream of small writes (one per message sent) made a claim wait
    90 ms on average. The busy timeout still covers writers in other processes."""
    if not is_sqlite(engine):
        async with engine.begin() as conn:
            yield conn
        return
    lock = _sqlite_writers.setdefault(engine, asyncio.Lock())
    async with lock, engine.connect() as conn:
        conn = await conn.execution_options(**{IMMEDIATE: True})
        async with conn.begin():
            yield conn


@asynccontextmanager
async def rehearsal_transaction(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """`write_transaction` that is always rolled back: a dry run makes the very writes it
    previews (a digest planned, its outbox rows queued) and reads them back, then keeps
    nothing."""
    async with write_transaction(engine) as conn:
        rehearsal = await conn.begin_nested()
        try:
            yield conn
        finally:
            await rehearsal.rollback()


def writers_run_at_once(engine: AsyncEngine) -> bool:
    """Whether several transactions (of this process or of replicas) write at once: true on
    PostgreSQL, so planning may run lanes side by side and replicas share a pace in the
    database; SQLite takes one writer at a time."""
    return not is_sqlite(engine)


@asynccontextmanager
async def redoable_write_transaction(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """`write_transaction` for work that is simply done again if a crash loses it (planning a
    tick's runs). On PostgreSQL it does not wait for the WAL flush (no message of it can have
    been sent: a sender's claim commits with the flush, which writes this WAL first) and does
    not compile statements to machine code (JIT, chosen by cost estimates a table growing
    through the tick inflates, costs tens of milliseconds for key lookups and saves nothing)."""
    async with write_transaction(engine) as conn:
        if not is_sqlite(engine):
            await conn.execute(text("SET LOCAL synchronous_commit TO OFF"))
            await conn.execute(text("SET LOCAL jit TO OFF"))
        yield conn


# The newest migration (tests/core/store check it against alembic's own head). A store already
# there is opened without importing alembic at all (with mako and pygments, about 11 MB).
HEAD_REVISION = "0021"


def alembic_config(connection: Connection | None = None) -> Any:
    """Alembic's config for prdigest's migrations, on `connection` when given."""
    from alembic.config import Config as AlembicConfig

    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def _upgrade(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
    from alembic import command

    command.upgrade(alembic_config(connection), "head")


def _current(connection: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection).get_current_revision()


async def _stored_revision(engine: AsyncEngine) -> str | None:
    """The revision alembic recorded, read without alembic (None: a new or unversioned store)."""
    try:
        async with engine.connect() as conn:
            found = await conn.execute(text("SELECT version_num FROM alembic_version"))
            return found.scalar()
    except DBAPIError:
        return None


async def migrate(engine: AsyncEngine) -> None:
    """Apply every migration not yet applied; safe to call from several processes at once."""
    if await _stored_revision(engine) == HEAD_REVISION:
        return
    async with write_transaction(engine) as conn:
        await conn.run_sync(_upgrade)


async def current_revision(engine: AsyncEngine) -> str | None:
    async with engine.connect() as conn:
        return await conn.run_sync(_current)
