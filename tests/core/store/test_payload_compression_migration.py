"""Migration 0021: on PostgreSQL with lz4, rendered messages and "+N more" lists are
compressed with lz4 (pglz before it), and a downgrade gives the columns the server's default
back; on SQLite it changes nothing."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, select, text

from bot.core.store.sql.db import create_engine, migrate, write_transaction
from bot.core.store.sql.tables import edition_messages, editions
from tests.kits.migrations import downgrade_to

NOW = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
PAYLOAD = {"text": "权重同步 " * 2000, "parse_mode": "HTML"}  # past TOAST's 2 kB: compressed


def _downgrade_0020(connection: Connection) -> None:
    downgrade_to(connection, "0020")


async def _compression(conn: object) -> dict[str, str]:
    """Each column's own compression (`l`: lz4, `p`: pglz, ``: the server's default)."""
    found = await conn.execute(  # type: ignore[attr-defined]
        text(
            "SELECT attrelid::regclass::text || '.' || attname, attcompression::text"
            " FROM pg_attribute WHERE (attrelid::regclass::text, attname) IN"
            " (('edition_messages', 'payload'), ('editions', 'more'))"
        )
    )
    return {name: kind for name, kind in found}


async def _lz4(conn: object) -> bool:
    found = await conn.execute(  # type: ignore[attr-defined]
        text(
            "SELECT 1 FROM pg_settings"
            " WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)"
        )
    )
    return found.first() is not None


async def test_payloads_are_compressed_with_lz4_where_the_server_has_it(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        await migrate(engine)
        async with write_transaction(engine) as conn:
            await conn.execute(editions.insert().values(id=1, created_at=NOW, more=[[1, "r", 1]]))
            await conn.execute(
                edition_messages.insert().values(edition_id=1, part=0, payload=PAYLOAD)
            )
        async with engine.connect() as conn:
            stored = (await conn.execute(select(edition_messages.c.payload))).scalar_one()
            assert stored == PAYLOAD  # written and read back whatever the compression
            if engine.dialect.name != "postgresql":
                return
            lz4 = await _lz4(conn)
            wanted = "l" if lz4 else ""
            assert await _compression(conn) == {
                "edition_messages.payload": wanted,
                "editions.more": wanted,
            }
            if lz4:  # the value written since is lz4's
                method = await conn.execute(
                    text("SELECT pg_column_compression(payload) FROM edition_messages")
                )
                assert method.scalar_one() == "lz4"
        async with write_transaction(engine) as conn:
            await conn.run_sync(_downgrade_0020)
            assert set((await _compression(conn)).values()) == {""}
    finally:
        await engine.dispose()
