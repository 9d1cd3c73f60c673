"""The local PostgreSQL for the benchmarks that need it: a private schema, dropped after."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from bot.core.store.sql.db import create_engine

PG_ENV = "BOT_BENCH_DATABASE_URL"
PG_DEFAULT = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


@asynccontextmanager
async def postgres_schema(name: str) -> AsyncIterator[str | None]:
    """A URL on a private schema of $BOT_BENCH_DATABASE_URL (default the local test server),
    or None when no server answers (`name` says which benchmark skipped it)."""
    base = os.environ.get(PG_ENV, PG_DEFAULT)
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(base)
    try:
        async with admin.begin() as conn:
            await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    except (OSError, OperationalError) as exc:
        print(f"bench {name}: PostgreSQL skipped ({exc.__class__.__name__})", file=sys.stderr)
        await admin.dispose()
        yield None
        return
    try:
        sep = "&" if "?" in base else "?"
        yield f"{base}{sep}options=-csearch_path%3D{schema}"
    finally:
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()
