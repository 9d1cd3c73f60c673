"""`/find QUERY` in Telegram as a group reads it: each result's ref a link to the PR on
GitHub, one keyboard row per result (`📄 #7422`, `✅ #7422`, the digest's `report:REF` and
`read:REF`), and the buttons answer as a digest's do."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.core.render.limits.telegram import TELEGRAM_MAX_BUTTONS
from bot.core.reports.model import Report
from bot.core.reports.parse.parser import parse_file
from bot.core.store.sql.tables import reading_marks
from tests.fakes.telegram.api import FakeTelegram
from tests.fakes.telegram.state import SentMessage
from tests.kits.paths import SEED
from tests.kits.telegram import GROUP, MEMBER, TelegramBot, add_group, fast_fake, texts, until

REF = "verl-project/verl#7422"
CONFIG = {
    "locale": "en",
    "channels": [{"name": "readers", "platform": "telegram", "target": str(GROUP)}],
}


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with fast_fake() as server:
        add_group(server)
        yield server


@pytest.fixture
async def bot(fake: FakeTelegram, tmp_path: Path) -> AsyncIterator[TelegramBot]:
    async with TelegramBot.running(fake, tmp_path, config=CONFIG) as running:
        service = running.service
        await service.subscriptions.sync_config(service.ctx.config)
        seed = parse_file(SEED).report
        copies: list[tuple[Report, str]] = [
            (seed.model_copy(update={"number": n}), "test") for n in range(7500, 7512)
        ]
        await service.ctx.reports.upsert_many(copies)
        yield running


async def _find(fake: FakeTelegram, query: str) -> SentMessage:
    before = len(fake.sent_to(GROUP))
    fake.push_message(GROUP, f"/find {query}", user_id=MEMBER)
    await until(lambda: len(fake.sent_to(GROUP)) > before)
    return fake.sent_to(GROUP)[before]


def _rows(message: SentMessage) -> list[list[dict[str, str]]]:
    rows = (message.reply_markup or {}).get("inline_keyboard", [])
    assert isinstance(rows, list)
    return rows


async def test_each_result_is_a_link_with_a_row_of_its_own(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    answer = await _find(fake, "rollout")
    assert answer.plain_text.startswith("Reports matching rollout (13):\n")
    links = [entity.url for entity in answer.entities if entity.type == "text_link"]
    assert len(links) == 10 and len(set(links)) == 10
    assert all(str(url).startswith("https://github.com/verl-project/verl/pull/") for url in links)
    rows = _rows(answer)
    assert len(rows) == 10 and sum(len(row) for row in rows) <= TELEGRAM_MAX_BUTTONS
    for row, url in zip(rows, links, strict=True):
        number = str(url).rpartition("/")[2]
        assert row == [
            {"text": f"📄 #{number}", "callback_data": f"report:verl-project/verl#{number}"},
            {"text": f"✅ #{number}", "callback_data": f"read:verl-project/verl#{number}"},
        ]
    assert "`" not in answer.plain_text


async def test_read_under_a_result_marks_the_pr_read(fake: FakeTelegram, bot: TelegramBot) -> None:
    answer = await _find(fake, "权重 impact>=medium number:7422")
    assert [button["text"] for row in _rows(answer) for button in row] == ["📄 #7422", "✅ #7422"]
    answered = len(fake.answered_callbacks)
    fake.press(GROUP, answer.message_id, f"read:{REF}", user=MEMBER)
    await until(lambda: len(fake.answered_callbacks) > answered)
    assert REF in str(fake.answered_callbacks[-1]["text"])
    async with bot.service.ctx.engine.connect() as conn:
        rows = await conn.execute(select(reading_marks.c.kind, reading_marks.c.subject))
        assert [(str(r.kind), str(r.subject)) for r in rows] == [("read", REF)]


async def test_full_report_under_a_result_replies_with_the_report(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    answer = await _find(fake, "number:7422")
    before = len(fake.sent_to(GROUP))
    fake.press(GROUP, answer.message_id, f"report:{REF}", user=MEMBER)
    await until(lambda: len(fake.sent_to(GROUP)) > before)
    report = fake.sent_to(GROUP)[before]
    assert report.reply_to == answer.message_id
    assert "#7422" in texts(fake, GROUP)[before]
