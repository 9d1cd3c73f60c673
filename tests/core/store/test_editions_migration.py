"""Migration 0013 on a store 0012 made: a run's entries move to an edition numbered like the
run, so the "+N more" button it posted (the run id) pages on where it stopped; its queued
message keeps its own payload; a downgrade gives runs their entries and payloads back."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from alembic.script import ScriptDirectory
from sqlalchemy import Connection, inspect, select, text

from bot.core.store.editions import PAYLOAD
from bot.core.store.reading import take_page
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import (
    HEAD_REVISION,
    create_engine,
    current_revision,
    migrate,
    write_transaction,
)
from bot.core.store.sql.tables import digest_runs, outbox
from tests.kits.delivery import report
from tests.kits.migrations import alembic_config, downgrade_to, upgrade_to

NOW = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
VERL = "verl-project/verl"
ROOT = Path(__file__).resolve().parents[3]


def _upgrade_0012(connection: Connection) -> None:
    upgrade_to(connection, "0012")


def _downgrade_0012(connection: Connection) -> None:
    downgrade_to(connection, "0012")


def _tables(connection: Connection) -> set[str]:
    return set(inspect(connection).get_table_names())


def test_the_head_revision_constant_is_alembics_head() -> None:
    assert ScriptDirectory.from_config(alembic_config()).get_current_head() == HEAD_REVISION


async def _a_0012_store(conn: object) -> None:
    run = conn.run_sync  # type: ignore[attr-defined]
    await run(_upgrade_0012)
    execute = conn.execute  # type: ignore[attr-defined]
    await execute(
        text(
            "INSERT INTO destinations (id, platform, target, active, consecutive_failures,"
            " created_at, updated_at) VALUES (1, 'console', 'stdout', true, 0, :at, :at)"
        ),
        {"at": NOW},
    )
    await execute(
        text(
            "INSERT INTO digest_runs (id, destination_id, scheduled_for, created_at, from_seq,"
            " to_seq, entries, messages, status) VALUES (41, 1, :at, :at, 0, 4, 4, 1, 'pending')"
        ),
        {"at": NOW},
    )
    for position, (number, kind, paged) in enumerate(
        [(1, "new", None), (2, "more", NOW), (3, "more", None), (4, "more", None)]
    ):
        await execute(
            text(
                "INSERT INTO run_entries (run_id, position, seq, repo, number, tag, must_read,"
                " kind, part, paged_at) VALUES (41, :p, :n, :repo, :n, 'fix', false, :k, 0, :at)"
            ),
            {"p": position, "n": number, "repo": VERL, "k": kind, "at": paged},
        )
    await execute(
        text(
            "INSERT INTO outbox (run_id, destination_id, part, payload, status, attempts,"
            " next_attempt_at, created_at)"
            " VALUES (41, 1, 0, '{\"text\": \"queued before\"}', 'pending', 0, :at, :at)"
        ),
        {"at": NOW},
    )


async def test_a_0012_run_keeps_its_place_its_button_and_its_payload(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        async with write_transaction(engine) as conn:
            await _a_0012_store(conn)
        await migrate(engine)
        assert await current_revision(engine) == HEAD_REVISION
        await ReportStore(engine).upsert_many([(report(n), "") for n in range(1, 5)])
        async with engine.connect() as conn:
            run = (await conn.execute(select(digest_runs).where(digest_runs.c.id == 41))).one()
            assert (run.edition_id, run.paged) == (41, 1)
            [payload] = (await conn.execute(select(PAYLOAD).where(outbox.c.run_id == 41))).all()
            assert payload[0] == {"text": "queued before"}
        page = await take_page(engine, 1, 41, NOW)  # the old button carries the run id
        assert page is not None  # (a run without members pages DEFAULT_PAGE at a time)
        assert [item.report.number for item, _ in page.items] == [3, 4] and page.left == 0
        async with write_transaction(engine) as conn:
            await conn.run_sync(_downgrade_0012)
            assert {"run_entries"} <= await conn.run_sync(_tables)
            assert "editions" not in await conn.run_sync(_tables)
            count = await conn.execute(text("SELECT count(*) FROM run_entries WHERE run_id = 41"))
            assert count.scalar() == 4
    finally:
        await engine.dispose()


OPEN_AND_LIST = """
import asyncio, sys
from bot.core.store.sql.db import create_engine, migrate

async def main(url):
    engine = create_engine(url)
    await migrate(engine)
    await engine.dispose()

asyncio.run(main(sys.argv[1]))
print(sorted({name.split(".")[0] for name in sys.modules if name.startswith("alembic")}))
"""


async def test_a_store_at_the_head_opens_without_importing_alembic(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        await migrate(engine)
    finally:
        await engine.dispose()
    done = subprocess.run(
        [sys.executable, "-c", OPEN_AND_LIST, database_url],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert done.stdout.strip() == "[]", done.stderr[-2000:]
