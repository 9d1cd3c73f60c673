"""The Full report in Telegram, as a person sees it: 📄 under a digest entry posts one message
(the summary and a keyboard of the report's sections), a section's button turns that same
message to the section (editMessageText), a long section pages within it (‹ 1/N ›), and in a
group 📩 sends the report to the presser's private chat, or says to start the bot first.

The digest is planned and delivered like a scheduled one; every press is a callback_query the
strict fake sends for a button the message shows (a forged one is pushed as it is).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.core.delivery.outbox import plan_digest
from bot.core.models import Platform
from bot.core.render.actions import EntryAction, action_data
from bot.core.render.limits.telegram import TELEGRAM_MAX_CALLBACK_BYTES, TELEGRAM_MAX_UTF16
from bot.core.render.split import utf16_len
from bot.core.reports.parse.parser import parse_file
from tests.fakes.telegram.api import FakeTelegram
from tests.fakes.telegram.faults import Fault
from tests.fakes.telegram.state import SentMessage
from tests.kits.paths import SEED
from tests.kits.telegram import GROUP, MEMBER, TelegramBot, add_group, fast_fake, notice, until
from tests.kits.waiting import until_async

REF = "verl-project/verl#7422"
LONG_REF = "verl-project/verl#7600"
END = "END-OF-IMPLEMENTATION"
EN_TABS = ["Summary", "Motivation", "Implementation", "Files", "Comments", "Risks", "Related"]
ZH_TABS = ["摘要", "动机", "实现", "文件", "评论", "风险", "关联"]
SEND_PRIVATELY = "📩 Send privately"
SETTLE_SECONDS = 0.5  # five paced replies would arrive within it (the fake runs 10x faster)


def _config(locale: str) -> dict[str, Any]:
    channel = {"name": "readers", "platform": "telegram", "target": str(GROUP), "max_items": 5}
    return {"locale": locale, "channels": [channel]}


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with fast_fake() as server:
        add_group(server)
        yield server
    assert server.violations == [], "every reply kept to the flood limits"


async def _bot(fake: FakeTelegram, tmp_path: Path, locale: str) -> AsyncIterator[TelegramBot]:
    async with TelegramBot.running(fake, tmp_path, config=_config(locale)) as running:
        service = running.service
        await service.subscriptions.sync_config(service.ctx.config)
        seed = parse_file(SEED).report
        implementation = "\n\n".join([seed.implementation] * 12 + [END])
        long = seed.model_copy(update={"number": 7600, "implementation": implementation})
        await service.ctx.reports.upsert(long, source="test")
        yield running


@pytest.fixture
async def bot(fake: FakeTelegram, tmp_path: Path) -> AsyncIterator[TelegramBot]:
    async for running in _bot(fake, tmp_path, "en"):
        yield running


async def _digest(bot: TelegramBot, fake: FakeTelegram) -> list[SentMessage]:
    """Plan the group's digest and deliver it; its messages."""
    service = bot.service
    [sub] = await service.subscriptions.of(Platform.TELEGRAM, str(GROUP))
    now = service.clock()
    run = await plan_digest(service.ctx.engine, sub, now, service.renderer, now)
    assert run.created and run.messages

    async def delivered() -> bool:
        await service.deliverer.run_once()
        return len(fake.sent_to(GROUP)) >= run.messages

    await until_async(delivered, timeout=10, what="the digest was not delivered")
    return fake.sent_to(GROUP)


def _data(message: SentMessage) -> list[str]:
    rows = (message.reply_markup or {}).get("inline_keyboard", [])
    assert isinstance(rows, list)
    return [str(button["callback_data"]) for row in rows for button in row]


def _labels(message: SentMessage) -> list[str]:
    rows = (message.reply_markup or {}).get("inline_keyboard", [])
    assert isinstance(rows, list)
    return [str(button["text"]) for row in rows for button in row]


def _shown(fake: FakeTelegram, message: SentMessage) -> SentMessage:
    """The message as the chat shows it now (after any edit)."""
    return fake.state.chat(message.chat_id).messages[message.message_id]


async def _press(fake: FakeTelegram, message: SentMessage, data: str, user: int) -> dict[str, Any]:
    """`user` presses the button carrying `data` (the fake refuses one the message does not
    show); the answerCallbackQuery it got."""
    answered = len(fake.answered_callbacks)
    fake.press(message.chat_id, message.message_id, data, user=user)
    await until(lambda: len(fake.answered_callbacks) > answered)
    return dict(fake.answered_callbacks[-1])


async def _open(fake: FakeTelegram, bot: TelegramBot, ref: str) -> SentMessage:
    """Press 📄 under `ref`'s digest entry; the one message that posts (nothing else does)."""
    digest = await _digest(bot, fake)
    data = action_data(EntryAction.REPORT, ref)
    [entry] = [message for message in digest if data in _data(message)]
    before = len(fake.sent_to(GROUP))
    await _press(fake, entry, data, MEMBER)
    await until(lambda: len(fake.sent_to(GROUP)) > before)
    await asyncio.sleep(SETTLE_SECONDS)
    [pager] = fake.sent_to(GROUP)[before:]
    assert pager.method == "sendMessage" and pager.reply_to == entry.message_id
    return pager


def _button(message: SentMessage, label: str) -> str:
    """The callback_data of the button labelled `label` (the shown one's mark ignored)."""
    rows = (message.reply_markup or {}).get("inline_keyboard", [])
    assert isinstance(rows, list)
    [data] = [b["callback_data"] for row in rows for b in row if b["text"].lstrip("▸ ") == label]
    return str(data)


def _fits(message: SentMessage) -> None:
    assert utf16_len(message.text) <= TELEGRAM_MAX_UTF16, "the HTML sent, entities and all"
    assert all(len(data.encode()) <= TELEGRAM_MAX_CALLBACK_BYTES for data in _data(message))


async def test_full_report_posts_one_message_with_the_summary_and_a_keyboard_of_sections(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    pager = await _open(fake, bot, REF)
    head = pager.plain_text.splitlines()
    assert "#7422" in head[0] and "Summary" in head[1], "the PR, and the section shown"
    assert "移除 dummy 格式覆盖" in pager.plain_text, "the report's summary"
    assert _labels(pager) == ["▸ Summary", *EN_TABS[1:], SEND_PRIVATELY], "each section once"
    _fits(pager)


async def test_sections_are_labelled_in_the_chats_language(
    fake: FakeTelegram, tmp_path: Path
) -> None:
    async for bot in _bot(fake, tmp_path, "zh"):
        pager = await _open(fake, bot, REF)
        assert _labels(pager) == [f"▸ {ZH_TABS[0]}", *ZH_TABS[1:], "📩 私聊发给我"]
        assert "执行摘要" in pager.plain_text


async def test_a_section_button_edits_the_message_instead_of_posting(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    pager = await _open(fake, bot, REF)
    sent = len(fake.calls("sendMessage"))
    for label, words in [("Risks", "FP8 例外一并删除"), ("Files", "Key code"), ("Summary", "")]:
        await _press(fake, _shown(fake, pager), _button(_shown(fake, pager), label), MEMBER)
        await until(lambda: f"▸ {label}" in _labels(_shown(fake, pager)))  # noqa: B023
        shown = _shown(fake, pager)
        assert words in shown.plain_text and shown.method == "editMessageText"
        _fits(shown)
    assert len(fake.calls("sendMessage")) == sent, "nothing new posted"
    assert [m.method for m in fake.sent_to(GROUP)[-3:]] == ["editMessageText"] * 3


async def test_a_long_section_pages_within_the_message(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    pager = await _open(fake, bot, LONG_REF)
    await _press(fake, pager, _button(pager, "Implementation"), MEMBER)
    await until(lambda: "▸ Implementation" in _labels(_shown(fake, pager)))
    first = _shown(fake, pager)
    [count] = [label.split("/")[1] for label in _labels(first) if label.startswith("1/")]
    pages = [first]
    for number in range(2, int(count) + 1):
        await _press(fake, pages[-1], _button(pages[-1], "›"), MEMBER)
        await until(lambda: f"{number}/{count}" in _labels(_shown(fake, pager)))  # noqa: B023
        pages.append(_shown(fake, pager))
    assert int(count) > 2 and all(page.message_id == pager.message_id for page in pages)
    for page in pages:
        _fits(page)
    assert END in pages[-1].plain_text and END not in pages[0].plain_text


async def test_a_forged_press_is_refused_and_changes_nothing(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    pager = await _open(fake, bot, REF)
    forged = [
        "sec:verl-project/verl#7422:passwords:0",
        "sec:verl-project/verl#7422:full:0",
        "sec:verl-project/verl#7422:risks:99999",
        "sec:verl-project/verl#7422:risks:٣",
        "sec:verl project#7422:risks:0",
        "sec:7422:risks",
        "sec:" + "9" * 40 + ":risks:0",
    ]
    for data in forged:
        answered = len(fake.answered_callbacks)
        fake.push_callback_query(GROUP, pager.message_id, data, MEMBER)
        await until(lambda: len(fake.answered_callbacks) > answered)  # noqa: B023
        assert not fake.answered_callbacks[-1].get("text"), data
    assert _shown(fake, pager) == pager, "the message is as it was posted"


async def test_send_privately_tells_to_start_the_bot_then_sends_the_pager(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    pager = await _open(fake, bot, REF)
    private = _button(pager, SEND_PRIVATELY)
    refused = await _press(fake, pager, private, MEMBER)  # no private chat with the bot yet
    assert refused["text"] == notice("report_start_bot") and refused.get("show_alert") is True
    fake.script(MEMBER, Fault(403, "Forbidden: bot can't initiate conversation with a user"))
    refused = await _press(fake, pager, private, MEMBER)
    assert refused["text"] == notice("report_start_bot") and refused.get("show_alert") is True
    assert fake.sent_to(MEMBER) == []
    told = await _press(fake, pager, private, MEMBER)  # the chat exists now, and takes it
    assert told["text"] == notice("report_sent_private") and not told.get("show_alert")
    [copy] = await until(lambda: fake.sent_to(MEMBER))
    assert copy.plain_text == pager.plain_text
    assert _labels(copy) == ["▸ Summary", *EN_TABS[1:]], "no 📩 in a private chat"
    await _press(fake, copy, _button(copy, "Risks"), MEMBER)
    await until(lambda: fake.sent_to(MEMBER)[-1].method == "editMessageText")
    assert _shown(fake, pager) == pager, "the group's message is left as it was"
