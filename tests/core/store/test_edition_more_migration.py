"""Migration 0020 on a store 0019 made: an edition's "+N more" rows become its own list, a
run's "+N more" button pages on where it stopped, and a downgrade gives the rows back."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, select, text

from bot.core.store.reading import take_page
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate, write_transaction
from bot.core.store.sql.tables import editions
from tests.kits.delivery import report
from tests.kits.migrations import downgrade_to, upgrade_to

NOW = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
VERL = "verl-project/verl"
ENTRIES = [(1, "new", 0), (2, "more", None), (3, "more", None), (4, "more", None)]


def _upgrade_0019(connection: Connection) -> None:
    upgrade_to(connection, "0019")


def _downgrade_0019(connection: Connection) -> None:
    downgrade_to(connection, "0019")


async def _a_0019_store(conn: object) -> None:
    await conn.run_sync(_upgrade_0019)  # type: ignore[attr-defined]
    execute = conn.execute  # type: ignore[attr-defined]
    statements = [
        "INSERT INTO destinations (id, platform, target, active, consecutive_failures,"
        " created_at, updated_at) VALUES (1, 'console', 'stdout', true, 0, :at, :at)",
        "INSERT INTO editions (id, created_at) VALUES (7, :at)",
        "INSERT INTO digest_runs (id, destination_id, scheduled_for, created_at, from_seq,"
        " to_seq, entries, messages, status, edition_id, paged)"
        " VALUES (41, 1, :at, :at, 0, 4, 4, 1, 'pending', 7, 1)",
    ]
    for statement in statements:
        await execute(text(statement), {"at": NOW})
    for position, (number, kind, part) in enumerate(ENTRIES):
        await execute(
            text(
                "INSERT INTO edition_entries (edition_id, position, seq, repo, number, tag,"
                " must_read, kind, part) VALUES (7, :p, :n, :repo, :n, 'fix', :must, :k, :part)"
            ),
            {"p": position, "n": number, "repo": VERL, "k": kind, "part": part,
             "must": number == 3},
        )  # fmt: skip


async def _rows(conn: object) -> list[tuple[object, ...]]:
    found = await conn.execute(  # type: ignore[attr-defined]
        text(
            "SELECT position, number, kind, must_read FROM edition_entries"
            " WHERE edition_id = 7 ORDER BY position"
        )
    )
    return [tuple(row) for row in found]


async def test_more_rows_become_the_editions_list_and_come_back_on_downgrade(
    database_url: str,
) -> None:
    engine = create_engine(database_url)
    try:
        async with write_transaction(engine) as conn:
            await _a_0019_store(conn)
        await migrate(engine)
        await ReportStore(engine).upsert_many([(report(n), "") for n in range(1, 5)])
        async with engine.connect() as conn:
            edition = (await conn.execute(select(editions).where(editions.c.id == 7))).one()
            assert edition.more_count == 3
            assert edition.more == [[n, VERL, n, "fix", n == 3] for n in (2, 3, 4)]
            kept = [(p, n, k, bool(m)) for p, n, k, m in await _rows(conn)]
            assert kept == [(0, 1, "new", False)]
        page = await take_page(engine, 1, 7, NOW)  # the button carries the edition
        assert page is not None  # (a run without members pages DEFAULT_PAGE at a time)
        assert [item.report.number for item, _ in page.items] == [3, 4] and page.left == 0
        assert [tag for _, tag in page.items] == ["fix", "fix"]
        assert await take_page(engine, 1, 7, NOW) is None  # nothing more behind it
        async with write_transaction(engine) as conn:
            await conn.run_sync(_downgrade_0019)
            restored = [(p, n, k, bool(m)) for p, n, k, m in await _rows(conn)]
            assert restored == [(p, n, k, n == 3) for p, (n, k, _) in enumerate(ENTRIES)]
    finally:
        await engine.dispose()
