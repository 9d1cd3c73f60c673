"""✅ Read changes the digest message in Telegram: the entry's line ends in "✅ <who read it>"
and its ✅ button leaves the keyboard (editMessageText), while the chat gets one line per PR
however many press it.

The digest (both PRs in one message) is planned and delivered like a scheduled one to the
strict fake, which refuses a press on a button the message does not show.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.adapters.telegram.entry_buttons import read_text
from bot.chat.reading import ReadMessage
from bot.core.render.actions import EntryAction, action_data
from bot.core.store.sql.tables import reading_marks
from tests.fakes.telegram.api import FakeTelegram
from tests.fakes.telegram.state import SentMessage
from tests.kits.telegram import (
    ADMIN,
    GROUP,
    MEMBER,
    TelegramBot,
    add_group,
    deliver_digest,
    fast_fake,
    notice,
    two_pr_group,
    until,
)

REF = "verl-project/verl#7422"
OTHER = "verl-project/verl#7500"


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with fast_fake() as server:
        add_group(server)
        yield server
    assert server.violations == [], "every reply kept to the flood limits"


@pytest.fixture
async def bot(fake: FakeTelegram, tmp_path: Path) -> AsyncIterator[TelegramBot]:
    async with two_pr_group(fake, tmp_path, max_items=5) as running:
        yield running


async def _digest(bot: TelegramBot, fake: FakeTelegram) -> SentMessage:
    """Plan the group's digest and deliver it; its message (both PRs)."""
    [digest] = await deliver_digest(bot, fake)
    assert "#7422" in digest.plain_text and "#7500" in digest.plain_text
    return digest


def _shown(fake: FakeTelegram, digest: SentMessage) -> SentMessage:
    """The digest message as the chat shows it now."""
    return fake.state.chat(GROUP).messages[digest.message_id]


def _data(message: SentMessage) -> list[str]:
    markup = message.reply_markup or {}
    rows = markup.get("inline_keyboard", [])
    assert isinstance(rows, list)
    return [str(button["callback_data"]) for row in rows for button in row]


def _lines(fake: FakeTelegram) -> list[SentMessage]:
    """The messages the bot sent to the chat after the digest (not edits)."""
    return [m for m in fake.sent_to(GROUP)[1:] if m.method == "sendMessage"]


def _line_of(message: SentMessage, ref: str) -> str:
    """The line of the digest's text that names `ref`'s PR."""
    number = ref.rpartition("#")[2]
    return next(line for line in message.plain_text.splitlines() if f"#{number}" in line)


async def _readers(bot: TelegramBot) -> list[tuple[str, str]]:
    async with bot.service.ctx.engine.connect() as conn:
        rows = await conn.execute(select(reading_marks.c.subject, reading_marks.c.actor))
        return sorted((str(r.subject), str(r.actor)) for r in rows)


async def test_read_edits_the_entry_and_takes_its_read_button_away(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    digest = await _digest(bot, fake)
    assert action_data(EntryAction.READ, REF) in _data(digest)
    answered = len(fake.answered_callbacks)
    fake.press(GROUP, digest.message_id, action_data(EntryAction.READ, REF), user=MEMBER)
    await until(lambda: len(_lines(fake)) == 1 and len(fake.answered_callbacks) > answered)

    said = notice("marked_read", ref=REF, user="User 13")
    assert fake.answered_callbacks[-1]["text"] == said
    assert [m.plain_text for m in _lines(fake)] == [said]
    edits = [m for m in fake.sent_to(GROUP) if m.method.startswith("editMessage")]
    assert [m.message_id for m in edits] == [digest.message_id]
    shown = _shown(fake, digest)
    assert _line_of(shown, REF).endswith("· ✅ User 13")
    assert "✅" not in _line_of(shown, OTHER)
    assert action_data(EntryAction.READ, REF) not in _data(shown)
    assert action_data(EntryAction.READ, OTHER) in _data(shown), "the other PR's stays"
    assert len(_data(shown)) == len(_data(digest)) - 1, "📄 and ⋯ stay"


async def test_two_readers_one_line_and_both_names_on_the_entry(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    digest = await _digest(bot, fake)
    data = action_data(EntryAction.READ, REF)
    fake.press(GROUP, digest.message_id, data, user=MEMBER)
    await until(lambda: len(_lines(fake)) == 1)
    # A second member whose client still shows the button presses it.
    answered = len(fake.answered_callbacks)
    fake.push_callback_query(GROUP, digest.message_id, data, ADMIN)
    await until(lambda: len(fake.answered_callbacks) > answered)
    await until(lambda: "User 11" in _line_of(_shown(fake, digest), REF))

    assert fake.answered_callbacks[-1]["text"] == notice(
        "marked_read", ref=REF, user="User 13, User 11"
    )
    assert fake.answered_callbacks[-1].get("show_alert") is not True
    assert _line_of(_shown(fake, digest), REF).endswith("✅ User 13, User 11")
    assert len(_lines(fake)) == 1, "one line per PR"
    assert await _readers(bot) == [(REF, "User 13\nUser 11")]


async def test_reading_the_other_pr_keeps_the_first_mark(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    digest = await _digest(bot, fake)
    fake.press(GROUP, digest.message_id, action_data(EntryAction.READ, REF), user=MEMBER)
    await until(lambda: len(_lines(fake)) == 1)
    await until(lambda: action_data(EntryAction.READ, REF) not in _data(_shown(fake, digest)))
    fake.press(GROUP, digest.message_id, action_data(EntryAction.READ, OTHER), user=ADMIN)
    await until(lambda: len(_lines(fake)) == 2)
    await until(lambda: "✅ User 11" in _line_of(_shown(fake, digest), OTHER))
    shown = _shown(fake, digest)
    assert _line_of(shown, REF).endswith("✅ User 13")
    assert not [d for d in _data(shown) if d.startswith("read:")], "no Read button left"


def test_marks_that_would_pass_4096_characters_leave_the_text_alone() -> None:
    link = '<a href="https://github.com/verl-project/verl/pull/7422">#7422</a>'
    sent = ReadMessage(1, "5", {}, (REF,), {REF: ["@alice", "<b>"]})
    shown = read_text(f"{link} title\nmore", sent, "✅ {names}")
    assert shown == f"{link} title · ✅ @\u2060alice, &lt;b&gt;\nmore"
    assert read_text(f"{link} {'x' * 4085}", sent, "✅ {names}") is None
