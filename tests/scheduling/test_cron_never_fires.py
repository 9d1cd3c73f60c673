"""Schedules that never fire: refused in bot.core.timing.cron, the config, check-config and the
chat; searching their fire times is bounded; stored ones cost a tick nothing.

`* * 31 2,4,6,9,11 *` asks for day 31 of months that have none. Unbounded, a search for its fire
time once walked to the year 9999: seconds of CPU per search, every 15 s tick, for every such
chat.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import update

from bot.chat.answers import Answerer, Notice, render_reply
from bot.chat.commands import parse
from bot.cli import main
from bot.core.digest.select import DigestFilter
from bot.core.models import Format, Locale, Platform
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.sql.tables import destinations as destinations_table
from bot.core.store.subscriptions import SubscriptionStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from bot.core.timing.cron import CronError, next_fire, previous_fire
from bot.scheduling.tick import DigestTicker
from bot.settings import BotConfig, ConfigError, load_config
from tests.kits.answers import private_chat
from tests.kits.delivery import FakeClock, save_chat

NEVER = "* * 31 2,4,6,9,11 *"
NOW = datetime(2026, 9, 1, 9, 30, tzinfo=UTC)
REPEATS = 7


def _best_of(action: Callable[[], object], repeats: int = REPEATS) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize(
    "expr",
    [
        NEVER,
        "0 9 30 2 *",  # February has no 30th
        "0 9 29 2 *",  # the next 29 February is in 2028, more than a year after NOW
        "0 9 */31 2 mon#5",  # `*/31` is day 1, and a leading `*` makes the days AND: never
    ],
)
def test_a_cron_with_no_fire_time_within_a_year_is_refused(expr: str) -> None:
    with pytest.raises(CronError, match="never fires within a year"):
        next_fire(expr, "Asia/Shanghai", NOW)


@pytest.mark.parametrize(
    "expr", ["0 9 13 * fri", "0 0 1 1 *", "0 9 * * mon-fri", "0 9 31 * *", "0 9 31 12 mon"]
)
def test_rare_but_real_schedules_are_accepted(expr: str) -> None:
    fire = next_fire(expr, "Asia/Shanghai", NOW)
    assert NOW < fire <= NOW.replace(year=2027, month=9, day=2)


def test_searching_a_never_firing_cron_costs_about_what_a_daily_one_does() -> None:
    """Bounded: before the fix one search of NEVER walked to the year 9999 (~0.8 s, and the
    tick's previous_fire made several); a daily cron's search takes about 0.1 ms."""
    daily = _best_of(lambda: previous_fire("0 9 * * *", "UTC", NOW))
    never = _best_of(lambda: previous_fire(NEVER, "UTC", NOW))
    assert previous_fire(NEVER, "UTC", NOW) is None
    assert never < 20 * daily, f"never-firing {never * 1e3:.2f} ms, daily {daily * 1e3:.2f} ms"
    daily_next = _best_of(lambda: next_fire("0 9 * * *", "UTC", NOW))

    def refused() -> None:
        with pytest.raises(CronError):
            next_fire(NEVER, "UTC", NOW)

    never_next = _best_of(refused)
    assert never_next < 20 * daily_next, f"{never_next * 1e3:.2f} vs {daily_next * 1e3:.2f} ms"


def _config(tmp_path: Path, schedule: str) -> Path:
    path = tmp_path / "bot.yaml"
    path.write_text(
        f"channels:\n  - {{name: a, platform: console, target: stdout, schedule: '{schedule}'}}\n",
        encoding="utf-8",
    )
    return path


def test_the_config_refuses_a_never_firing_schedule_by_its_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(_config(tmp_path, NEVER))
    assert "channels.a.schedule" in str(caught.value)
    assert "never fires within a year" in str(caught.value)


def test_check_config_refuses_it_with_the_config_error_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BOT_CONFIG", str(_config(tmp_path, NEVER)))
    monkeypatch.setenv("BOT_DATABASE_URL", f"sqlite:///{tmp_path / 'bot.db'}")
    assert main(["check-config"]) == 2
    err = capsys.readouterr().err
    assert "never fires within a year" in err and "Traceback" not in err


async def _chats(store: ReportStore, schedules: list[str], first: int = 1000) -> SubscriptionStore:
    """Chat subscriptions saved as they were before the refusal: straight into the store."""
    clock = FakeClock(NOW)
    for index, schedule in enumerate(schedules):
        flt = DigestFilter()
        await save_chat(
            store.engine, Platform.TELEGRAM, str(first + index), flt, schedule=schedule, clock=clock
        )
    return SubscriptionStore(store.engine, clock)


def _broken(count: int) -> list[str]:
    """`count` different never-firing schedules (no verdict is shared between them)."""
    return [f"{i % 60} {i // 60} 31 2,4,6,9,11 *" for i in range(count)]


async def _set_active(store: ReportStore, ids: list[int], active: bool) -> None:
    async with store.engine.begin() as conn:
        await conn.execute(
            update(destinations_table).where(destinations_table.c.id.in_(ids)).values(active=active)
        )


async def test_stored_never_firing_schedules_add_little_to_a_tick(store: ReportStore) -> None:
    """Ticks with and without 100 stored never-firing chats, interleaved (the machine's load
    weighs on both alike; the broken chats are paused and resumed between ticks). What they
    still cost is reading their rows; before the fix each cost seconds of CPU per tick."""
    destinations = await _chats(store, ["0 9 * * *"])
    await _chats(store, _broken(100), first=2000)
    broken = [d.destination_id for d in await destinations.all() if d.schedule != "0 9 * * *"]
    assert len(broken) == 100
    clock = FakeClock(NOW)
    ticker = DigestTicker(store.engine, destinations, Renderer(), clock)
    await ticker.tick()  # the catch-up, and each schedule judged once (then once a day)
    best = {True: float("inf"), False: float("inf")}
    for _ in range(REPEATS):
        for active in (False, True):
            await _set_active(store, broken, active)
            clock.advance(15)
            start = time.perf_counter()
            await ticker.tick()
            best[active] = min(best[active], time.perf_counter() - start)
    with_broken, without = best[True], best[False]
    assert with_broken < 4 * without, (
        f"100 broken schedules: {with_broken * 1e3:.1f} ms a tick, none: {without * 1e3:.1f} ms"
    )


async def test_a_stored_never_firing_schedule_is_skipped_and_logged_once(
    store: ReportStore, caplog: pytest.LogCaptureFixture
) -> None:
    destinations = await _chats(store, [NEVER, "0 9 * * *"])
    clock = FakeClock(NOW)
    ticker = DigestTicker(store.engine, destinations, Renderer(), clock)
    caplog.set_level(logging.WARNING, logger="prdigest.scheduler")
    planned = []
    for _ in range(3):
        planned += await ticker.tick()
        clock.advance(15)
    skipped = [r for r in caplog.records if r.getMessage() == "digest.schedule_skipped"]
    assert len(skipped) == 1
    assert len(planned) == 1  # the daily chat still gets its catch-up


async def test_telegram_schedule_refuses_a_cron_that_never_fires(store: ReportStore) -> None:
    destinations = DestinationStore(store.engine, FakeClock(NOW))
    answerer = Answerer(store, destinations, BotConfig(), clock=FakeClock(NOW))
    await answerer.answer(parse("subscribe", "rollout"), private_chat())
    answer = await answerer.answer(parse("schedule", f'"{NEVER}"'), private_chat())
    assert isinstance(answer.reply, Notice) and answer.reply.key == "bad_schedule"
    assert answer.announce is None
    [message] = render_reply(Renderer(), answer.reply, Format.TELEGRAM, Locale.EN)
    assert "Cannot set that schedule" in message.text
    assert "never fires within a year" in message.text
    [dest] = await SubscriptionStore(store.engine).all()
    assert dest.schedule != NEVER  # the chat keeps the schedule it had
