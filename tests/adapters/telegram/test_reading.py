"""A Telegram group reads its digest: Read, Full report, ⋯ (the entry's menu: Snooze, Mute
tag, Risks, Back) and "+N more" from the entry's buttons (callback_data as
bot/core/render/actions.py writes it), and `/unread`.

The digest is planned and delivered like a scheduled one; each press is a callback_query the
strict fake sends for a message the bot posted.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bot.core.render.actions import EntryAction, action_data
from bot.core.store.sql.tables import digest_runs, reading_marks
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
    texts,
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
    async with two_pr_group(fake, tmp_path, max_items=1) as running:
        yield running


async def _digest(bot: TelegramBot, fake: FakeTelegram) -> SentMessage:
    """Plan the group's digest and deliver it; its (first) message."""
    return (await deliver_digest(bot, fake))[0]


async def _press(
    fake: FakeTelegram, digest: SentMessage, action: EntryAction, argument: str, user: int
) -> dict[str, Any]:
    """Press the button the digest shows (the fake refuses one it does not); the
    answerCallbackQuery it got."""
    answered = len(fake.answered_callbacks)
    fake.press(GROUP, digest.message_id, action_data(action, argument), user=user)
    await until(lambda: len(fake.answered_callbacks) > answered)
    return dict(fake.answered_callbacks[-1])


def _rows(message: SentMessage) -> list[list[dict[str, str]]]:
    """The rows of the keyboard under a message."""
    markup = message.reply_markup or {}
    rows = markup.get("inline_keyboard", [])
    assert isinstance(rows, list)
    return rows


def _shown(fake: FakeTelegram, digest: SentMessage) -> SentMessage:
    """The digest message as the chat shows it now (its keyboard may have been swapped)."""
    return fake.state.chat(GROUP).messages[digest.message_id]


async def _open_menu(fake: FakeTelegram, digest: SentMessage, ref: str, user: int) -> SentMessage:
    """Press the entry's ⋯; the editMessageReplyMarkup that shows its menu."""
    edits = len(fake.sent_to(GROUP))
    await _press(fake, digest, EntryAction.MENU, ref, user)
    await until(lambda: len(fake.sent_to(GROUP)) > edits)
    edited = fake.sent_to(GROUP)[-1]
    assert edited.method == "editMessageReplyMarkup" and edited.message_id == digest.message_id
    return edited


async def _press_data(
    fake: FakeTelegram, digest: SentMessage, data: str, user: int
) -> dict[str, Any]:
    """A press carrying `data`, whatever the digest's buttons carry (a forged press); the
    answerCallbackQuery it got."""
    answered = len(fake.answered_callbacks)
    fake.push_callback_query(GROUP, digest.message_id, data, user)
    await until(lambda: len(fake.answered_callbacks) > answered)
    return dict(fake.answered_callbacks[-1])


async def _marks(bot: TelegramBot) -> list[tuple[str, str, str]]:
    async with bot.service.ctx.engine.connect() as conn:
        rows = await conn.execute(
            select(reading_marks.c.kind, reading_marks.c.subject, reading_marks.c.actor)
        )
        return sorted((str(r.kind), str(r.subject), str(r.actor)) for r in rows)


async def test_read_marks_the_pr_read_and_tells_the_chat_who(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    digest = await _digest(bot, fake)
    before = len(fake.sent_to(GROUP))
    answered = await _press(fake, digest, EntryAction.READ, REF, MEMBER)
    said = notice("marked_read", ref=REF, user="User 13")
    assert answered["text"] == said
    await until(lambda: len(fake.sent_to(GROUP)) == before + 2)  # the digest edited, the line
    assert texts(fake, GROUP)[-1] == said
    assert await _marks(bot) == [("read", REF, "User 13")]


async def test_snooze_is_for_anyone_and_mute_for_admins_only(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    digest = await _digest(bot, fake)
    await _open_menu(fake, digest, REF, MEMBER)  # Snooze and Mute are in the entry's ⋯ menu
    snoozed = await _press(fake, digest, EntryAction.SNOOZE, REF, MEMBER)
    assert "snoozed" in str(snoozed["text"]) and REF in str(snoozed["text"])
    refused = await _press(fake, digest, EntryAction.MUTE, "rollout", MEMBER)
    assert refused["text"] == notice("mute_not_admin", chat="chat")
    assert refused.get("show_alert") is True
    muted = await _press(fake, digest, EntryAction.MUTE, "rollout", ADMIN)
    assert "muted tag rollout" in str(muted["text"])
    kinds = [(kind, subject) for kind, subject, _ in await _marks(bot)]
    assert kinds == [("mute", "rollout"), ("snooze", REF)]


async def test_full_report_is_one_message_with_a_section_keyboard(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    digest = await _digest(bot, fake)
    before = len(fake.sent_to(GROUP))
    await _press(fake, digest, EntryAction.REPORT, REF, MEMBER)
    await until(lambda: len(fake.sent_to(GROUP)) > before)
    await asyncio.sleep(0.5)  # nothing else follows it
    [pager] = fake.sent_to(GROUP)[before:]
    assert "#7422" in pager.plain_text.splitlines()[0]
    assert pager.reply_markup is not None
    rows = pager.reply_markup["inline_keyboard"]
    assert isinstance(rows, list) and sum(len(row) for row in rows) >= 7, "a button a section"


async def test_more_button_and_slash_more_post_the_next_page(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    digest = await _digest(bot, fake)  # max_items 1: one of the two PRs is "+1 more"
    rest = "#7422" if "#7500" in digest.plain_text else "#7500"
    async with bot.service.ctx.engine.connect() as conn:
        run_id = (await conn.execute(select(digest_runs.c.id))).scalar_one()
    before = len(fake.sent_to(GROUP))
    await _press(fake, digest, EntryAction.MORE, str(run_id), MEMBER)
    await until(lambda: len(fake.sent_to(GROUP)) > before)
    assert rest in texts(fake, GROUP)[-1]
    fake.push_message(GROUP, "/more", user_id=MEMBER)
    await until(lambda: len(fake.sent_to(GROUP)) > before + 1)
    assert texts(fake, GROUP)[-1] == notice("more_none")
    again = await _press(fake, digest, EntryAction.MORE, str(run_id), MEMBER)
    assert again["text"] == notice("more_none") and again.get("show_alert") is True


async def test_slash_more_posts_the_page_of_the_latest_digest(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    digest = await _digest(bot, fake)
    rest = "#7422" if "#7500" in digest.plain_text else "#7500"
    before = len(fake.sent_to(GROUP))
    fake.push_message(GROUP, "/more", user_id=MEMBER)
    await until(lambda: len(fake.sent_to(GROUP)) > before)
    assert rest in texts(fake, GROUP)[-1]


async def test_unread_lists_the_must_reads_nobody_marked(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(GROUP, "/unread", user_id=MEMBER)
    await until(lambda: fake.sent_to(GROUP))
    assert texts(fake, GROUP)[-1] == notice("unread_none", days="7")
    digest = await _digest(bot, fake)
    shown = 7500 if "#7500" in digest.plain_text else 7422
    count = len(fake.sent_to(GROUP))
    fake.push_message(GROUP, "/unread", user_id=MEMBER)
    await until(lambda: len(fake.sent_to(GROUP)) > count)
    listed = texts(fake, GROUP)[-1]
    assert f"verl-project/verl#{shown}" in listed and "7 days left" in listed
    await _press(fake, digest, EntryAction.READ, f"verl-project/verl#{shown}", MEMBER)
    await until(lambda: "read by" in texts(fake, GROUP)[-1])
    count = len(fake.sent_to(GROUP))
    fake.push_message(GROUP, "/unread", user_id=MEMBER)
    await until(lambda: len(fake.sent_to(GROUP)) > count)
    assert texts(fake, GROUP)[-1] == notice("unread_none", days="7")


async def test_forged_button_data_is_answered_and_does_nothing(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    digest = await _digest(bot, fake)
    async with bot.service.ctx.engine.connect() as conn:
        edition = (await conn.execute(select(digest_runs.c.edition_id))).scalar_one()
    arabic_indic = "".join(chr(0x0660 + int(d)) for d in str(edition))  # int() reads it
    forged = [f"more:{arabic_indic}", "more:" + "9" * 59, "mute:", "read:#" + "7" * 40]
    before = len(fake.sent_to(GROUP))
    for data in forged:
        answered = await _press_data(fake, digest, data, ADMIN)
        assert "text" not in answered, data
    assert len(fake.sent_to(GROUP)) == before, "no page, no notice"
    assert await _marks(bot) == []
    async with bot.service.ctx.engine.connect() as conn:
        assert (await conn.execute(select(digest_runs.c.paged))).scalar_one() == 0


async def test_the_menu_button_swaps_in_the_prs_menu_and_back_restores_the_digest(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    digest = await _digest(bot, fake)
    posted = _rows(digest)
    before = len(fake.sent_to(GROUP))

    opened = await _open_menu(fake, digest, REF, MEMBER)

    rows = _rows(opened)
    assert rows[0] == posted[0], "the entry's row stays"
    menu = [[(b["text"], b["callback_data"]) for b in row] for row in rows[1:4]]
    assert menu == [
        [
            ("#7422 💤 7d", f"snooze:{REF}"),
            ("#7422 ⚠ Risks", f"risks:{REF}"),
            ("↩ #7422", f"back:{REF}"),
        ],
        [("#7422 🔇 rollout 7d", "mute:rollout")],
        [("#7422 🔇 fix 7d", "mute:fix")],
    ]
    assert rows[4:] == posted[1:], "then the digest's other rows"
    assert len(fake.sent_to(GROUP)) == before + 1, "the keyboard changed in place: no message"

    fake.press(GROUP, digest.message_id, f"back:{REF}", user=MEMBER)
    await until(lambda: len(fake.sent_to(GROUP)) == before + 2)
    restored = fake.sent_to(GROUP)[-1]
    assert restored.method == "editMessageReplyMarkup"
    assert _rows(restored) == posted, "Back shows the digest's keyboard as posted"
    assert _shown(fake, digest).reply_markup == digest.reply_markup


async def test_the_menu_button_again_closes_it_and_risks_answers_from_the_menu(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    digest = await _digest(bot, fake)
    await _open_menu(fake, digest, REF, MEMBER)
    closed = await _open_menu(fake, digest, REF, MEMBER)  # ⋯ again: an edit that closes it
    assert closed.reply_markup == digest.reply_markup
    await _open_menu(fake, digest, REF, MEMBER)
    before = len(fake.sent_to(GROUP))
    fake.press(GROUP, digest.message_id, f"risks:{REF}", user=MEMBER)
    await until(lambda: len(fake.sent_to(GROUP)) > before)
    assert "Risks and impact" in texts(fake, GROUP)[-1]
    assert await _marks(bot) == []
