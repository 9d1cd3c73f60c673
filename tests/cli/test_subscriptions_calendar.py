"""`prdigest subscriptions list` and the chat's `subscriptions` show the next *real* digest:
Golden Week (CN holidays) skipped, the CLI also saying which holidays it skipped."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.chat.answers import Answerer, Chat, Notice
from bot.chat.commands import parse
from bot.cli import main
from bot.core.models import Locale, Platform
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import SubscriptionStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from bot.settings import load_config
from tests.kits.delivery import FakeClock
from tests.kits.wall_clock import set_wall_clock

SEPT_30 = datetime(2026, 9, 30, 10, tzinfo=ZoneInfo("Asia/Shanghai"))
CONFIG = """\
timezone: Asia/Shanghai
locale: en
calendar: {workdays: [mon-fri], holidays: {country: CN}}
channels:
  - {name: team, platform: telegram, target: "-100", cadence: "daily 09:00"}
"""


async def test_subscriptions_list_shows_the_first_digest_after_golden_week(
    store: ReportStore,
    database_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "bot.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    monkeypatch.setenv("BOT_CONFIG", str(path))
    monkeypatch.setenv("BOT_DATABASE_URL", database_url)
    set_wall_clock(monkeypatch, SEPT_30)
    assert await asyncio.to_thread(main, ["subscriptions", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "telegram:-100",
        "  1. * · daily 09:00 · next 2026-10-08 09:00 Asia/Shanghai (after the holidays "
        "2026-10-01 to 2026-10-07: National Day, National Day (observed), ...) · last none yet · "
        "config team · flat · standard",
    ]


async def test_the_chats_list_shows_the_first_digest_after_golden_week(
    store: ReportStore, tmp_path: Path
) -> None:
    path = tmp_path / "bot.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    config = load_config(path)
    await SubscriptionStore(store.engine).sync_config(config)
    answerer = Answerer(store, DestinationStore(store.engine), config, clock=FakeClock(SEPT_30))

    async def is_admin() -> bool:
        return True

    chat = Chat(Platform.TELEGRAM, "-100", "ada", is_admin, Locale.EN, user_name="ada")
    answer = await answerer.answer(parse("subscriptions", ""), chat)
    assert isinstance(answer.reply, Notice)
    assert " · next 2026-10-08 09:00 Asia/Shanghai · " in answer.reply.params["items"]
