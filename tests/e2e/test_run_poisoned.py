"""Issue 14 #1: `prdigest run` with a poisoned file in a source directory starts, logs the bad
file once, and stores the others. Before, the first poll's OverflowError made it exit 3."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine
from tests.kits.poison import POISONS, write_good, write_poison
from tests.kits.proc import BotProcess
from tests.kits.waiting import until

pytestmark = pytest.mark.slow


async def test_run_starts_with_a_poisoned_source_and_stores_the_rest(
    subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    good = write_good(reports, 10)
    bad = write_poison(reports, POISONS[0], 1)  # "number": 10**30
    config = tmp_path / "bot.yaml"
    config.write_text(f"sources: [{{dir: '{reports}', interval_seconds: 5}}]\n", encoding="utf-8")
    bot = BotProcess({**subprocess_env, "BOT_CONFIG": str(config)})
    await bot.start()
    try:
        await bot.wait_ready()
        await until(lambda: _ingested(bot) == 1, 30, "the first poll stored nothing")
        later = write_good(reports, 1, start=11)  # what shows that one more poll ran
        await until(lambda: _ingested(bot) == 2, 30, "no second poll")
    finally:
        code = await bot.terminate()
    logs = bot.stderr.decode()
    assert code == 0, logs[-3000:]
    assert "Traceback" not in logs
    bad_lines = [line for line in logs.splitlines() if "source.bad_report" in line]
    assert len(bad_lines) == 1 and str(bad) in bad_lines[0], bad_lines
    engine = create_engine(subprocess_env["BOT_DATABASE_URL"])
    try:
        stored = await ReportStore(engine).since(0)
    finally:
        await engine.dispose()
    assert {s.report.number for s in stored} == set(good + later)


def _ingested(bot: BotProcess) -> int:
    """The polls that stored something, as the log says."""
    return bot.stderr.decode().count('"event": "source.ingested"')
