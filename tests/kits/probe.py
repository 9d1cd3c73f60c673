"""An engine on a test's fresh database with the test's own probe tables created."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import MetaData
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.store.sql.db import create_engine


@asynccontextmanager
async def engine_with(database_url: str, metadata: MetaData) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url)
    async with engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    try:
        yield engine
    finally:
        await engine.dispose()
