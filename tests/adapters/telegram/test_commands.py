"""Telegram commands as chat members see them: the service's adapter polls the strict fake.

To show that something was ignored without sleeping, a test sends it first and a command that
is answered after it: one chat's updates are handled in order, so once the second is answered
the first was handled too.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.adapters.telegram.sender import TelegramSender
from bot.core.models import Locale, Platform
from bot.core.reports.parse.parser import parse_file
from bot.core.store.subscriptions import DEFAULT_CHAT_SCHEDULE, Subscription
from bot.core.store.subscriptions.destination_store import Destination
from tests.fakes.telegram.api import FakeTelegram
from tests.fakes.telegram.state import user_object
from tests.fakes.telegram.updates import message_update
from tests.kits.paths import SEED
from tests.kits.telegram import (
    ADMIN,
    GROUP,
    MEMBER,
    OWNER,
    USER,
    ZH_USER,
    TelegramBot,
    add_group,
    buttons,
    fast_fake,
    notice,
    push_from_zh_user,
    subscribed,
    texts,
    until,
)
from tests.kits.waiting import until_async

ANONYMOUS_ADMIN_BOT = 1087968824  # Telegram's "Group" user behind anonymous admins


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with fast_fake() as server:
        server.add_chat(USER)
        add_group(server)
        yield server
    assert server.violations == [], "every reply kept to the flood limits"


@pytest.fixture
async def bot(fake: FakeTelegram, tmp_path: Path) -> AsyncIterator[TelegramBot]:
    async with TelegramBot.running(fake, tmp_path) as running:
        yield running


async def destination(bot: TelegramBot, chat_id: int) -> Destination | None:
    return await bot.service.destinations.find(Platform.TELEGRAM, str(chat_id))


async def subscriptions(bot: TelegramBot, chat_id: int) -> list[Subscription]:
    return await bot.service.subscriptions.of(Platform.TELEGRAM, str(chat_id))


def added(user: str, number: int, query: str) -> str:
    """What the chat reads when someone adds a subscription at the default schedule."""
    cadence = DEFAULT_CHAT_SCHEDULE
    return notice("subscription_added", user=user, number=str(number), query=query, cadence=cadence)


async def test_a_group_admin_subscribes_and_the_group_reads_who_changed_what(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(GROUP, "/subscribe rollout -ci", user_id=ADMIN)

    await until(lambda: fake.sent_to(GROUP))
    assert texts(fake, GROUP) == [added(f"User {ADMIN}", 1, "tag:rollout -ci")]
    dest = await destination(bot, GROUP)
    assert dest is not None and dest.active
    [sub] = await subscriptions(bot, GROUP)
    assert (sub.destination_id, sub.number, sub.filter.query) == (dest.id, 1, "tag:rollout -ci")
    assert sub.owner is None, "a group's subscription is the group's"


async def test_a_plain_member_cannot_change_the_groups_subscription(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(GROUP, "/subscribe docs", user_id=MEMBER)

    await until(lambda: fake.sent_to(GROUP))
    assert texts(fake, GROUP) == [notice("not_admin")]
    assert await destination(bot, GROUP) is None
    [check] = fake.calls("getChatMember")
    assert check.params["user_id"] == MEMBER


async def test_the_creator_and_an_anonymous_admin_may_subscribe_a_linked_channel_may_not(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    linked_channel = fake.add_chat(-100777, "channel", "Announcements").to_api()
    as_channel = message_update(fake.state, GROUP, "/subscribe ci", ANONYMOUS_ADMIN_BOT)
    as_channel["message"]["sender_chat"] = linked_channel  # type: ignore[index]
    as_group = message_update(fake.state, GROUP, "/subscribe sglang", ANONYMOUS_ADMIN_BOT)
    as_group["message"]["sender_chat"] = fake.chats[GROUP].to_api()  # type: ignore[index]

    fake.push_update(as_channel)
    fake.push_update(as_group)
    fake.push_message(GROUP, "/subscribe tag:rollout", user_id=OWNER)

    await until(lambda: len(fake.sent_to(GROUP)) == 3, timeout=8)
    shown = texts(fake, GROUP)
    assert shown[0] == notice("not_admin")
    assert shown[1] == added("PR readers", 1, "sglang")
    assert shown[2] == added(f"User {OWNER}", 2, "tag:rollout")
    subs = await subscriptions(bot, GROUP)
    assert [(s.name, s.owner) for s in subs] == [("sglang", None), ("tag:rollout", None)]


async def test_risks_answers_with_the_reports_four_risk_flags(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(USER, "/risks 7422")

    await until(lambda: fake.sent_to(USER))
    [answer] = fake.sent_to(USER)
    assert "#7422" in answer.plain_text
    for flag in (
        "移除隐式配置兜底",
        "standalone 需显式 auto",
        "FP8 例外一并删除",
        "多后端行为一致性",
    ):
        assert flag in answer.plain_text
    assert answer.parse_mode == "HTML"


async def test_summary_is_a_shortcut_like_risks_and_answers_what_pr_answers(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(USER, "/summary 7422")
    fake.push_message(USER, "/pr 7422")

    await until(lambda: len(fake.sent_to(USER)) == 2)
    summary, pr = texts(fake, USER)
    assert summary == pr
    assert "#7422" in summary


async def test_a_command_for_another_bot_is_ignored_and_one_for_us_is_answered(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(GROUP, "/pr@other_bot 7422", user_id=MEMBER)
    fake.push_message(GROUP, "/unknown_thing", user_id=MEMBER)
    fake.push_message(GROUP, "/pr@prdigest_test_bot 7422 files", user_id=MEMBER)

    await until(lambda: fake.sent_to(GROUP))
    [answer] = texts(fake, GROUP)
    assert "#7422" in answer and "Key files" in answer


async def test_an_unknown_command_in_a_private_chat_gets_a_hint(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(USER, "/frobnicate 7422")

    await until(lambda: fake.sent_to(USER))
    assert texts(fake, USER) == [notice("unknown_command", command="/frobnicate")]


async def test_the_command_menu_is_registered_and_polling_starts_without_a_webhook(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    menu = fake.state.commands[json.dumps([{"type": "default"}, ""], sort_keys=True)]
    names = [command["command"] for command in menu]
    assert names[:5] == ["start", "pr", "risks", "files", "related"]
    for verb in ("subscribe", "unsubscribe", "subscriptions", "tags", "digest", "schedule"):
        assert verb in names
    await until(lambda: fake.poll_in_flight)
    assert "deleteWebhook" in [call.method for call in fake.requests]
    assert fake.state.allowed_updates == {"message", "callback_query", "my_chat_member"}


async def test_a_chinese_speaking_user_reads_chinese_labels(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    push_from_zh_user(fake, "/subscribe tag:rollout")

    await until(lambda: fake.sent_to(ZH_USER))
    [shown] = texts(fake, ZH_USER)
    params = {"number": "1", "query": "tag:rollout", "cadence": DEFAULT_CHAT_SCHEDULE}
    assert shown.startswith(subscribed(Locale.ZH, **params))  # then the next time


async def test_a_digest_button_answers_with_that_prs_risks(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(USER, "/subscribe tag:rollout")
    await until(lambda: fake.sent_to(USER))
    newer = parse_file(SEED).report.model_copy(update={"number": 7500})
    await bot.service.ctx.reports.upsert(newer, source="test")

    fake.push_message(USER, "/digest")
    await until(lambda: len(fake.sent_to(USER)) == 2)
    digest = fake.sent_to(USER)[1]
    menu = next(b for b in buttons(digest) if b["callback_data"].startswith("menu:"))
    fake.press(USER, digest.message_id, menu["callback_data"], user=USER)  # ⋯ opens its menu
    await until(lambda: len(fake.sent_to(USER)) == 3)
    opened = fake.sent_to(USER)[2]
    assert opened.method == "editMessageReplyMarkup"
    risks = next(b for b in buttons(opened) if b["callback_data"].startswith("risks:"))
    fake.press(USER, digest.message_id, risks["callback_data"], user=USER)

    await until(lambda: len(fake.sent_to(USER)) == 4)
    assert len(fake.state.answered_callbacks) == 2
    section = fake.sent_to(USER)[3].plain_text
    assert "#7500" in section and "Risks and impact" in section and "FP8 例外一并删除" in section


def my_chat_member(fake: FakeTelegram, chat_id: int, old: str, new: str) -> dict[str, object]:
    def member(status: str) -> dict[str, object]:
        value: dict[str, object] = {"status": status, "user": fake.state.bot_user}
        if status == "kicked":
            value["until_date"] = 0
        return value

    return {
        "my_chat_member": {
            "chat": fake.chats[chat_id].to_api(),
            "from": user_object(ADMIN if chat_id < 0 else chat_id),
            "date": int(time.time()),
            "old_chat_member": member(old),
            "new_chat_member": member(new),
        }
    }


async def test_removing_the_bot_stops_the_groups_digest_and_adding_it_back_resumes_it(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(GROUP, "/subscribe tag:rollout", user_id=ADMIN)
    await until(lambda: fake.sent_to(GROUP))

    fake.push_update(my_chat_member(fake, GROUP, "member", "kicked"))
    await until(lambda: fake.state.updates == [])
    await _until_active(bot, GROUP, False)
    dest = await destination(bot, GROUP)
    assert dest is not None and "removed" in (dest.deactivated_reason or "")

    fake.push_update(my_chat_member(fake, GROUP, "kicked", "member"))
    await _until_active(bot, GROUP, True)


async def test_a_chat_that_unsubscribed_gets_nothing_back_when_the_bot_comes_back(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(USER, "/subscribe tag:rollout")
    fake.push_message(USER, "/unsubscribe all")
    await until(lambda: len(fake.sent_to(USER)) == 2, timeout=8)
    assert texts(fake, USER)[1] == notice("unsubscribed", items="1. tag:rollout")

    fake.push_update(my_chat_member(fake, USER, "kicked", "member"))
    fake.push_message(USER, "/start")
    await until(lambda: len(fake.sent_to(USER)) == 3, timeout=8)
    assert await subscriptions(bot, USER) == []


async def test_a_user_who_blocked_the_bot_gets_digests_again_after_start(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(USER, "/subscribe tag:rollout")
    await until(lambda: fake.sent_to(USER))
    fake.push_update(my_chat_member(fake, USER, "member", "kicked"))
    await _until_active(bot, USER, False)

    fake.push_message(USER, "/start")
    await until(lambda: len(fake.sent_to(USER)) == 2)
    assert "/subscribe" in texts(fake, USER)[1]  # the welcome lists the commands
    dest = await destination(bot, USER)
    assert dest is not None and dest.active


async def test_a_chat_the_outbox_found_blocked_gets_digests_again_after_start(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(USER, "/subscribe tag:rollout")
    await until(lambda: fake.sent_to(USER))
    dest = await destination(bot, USER)
    assert dest is not None
    # What the deliverer records after Telegram's 403s (see `Blocked`).
    blocked = "Forbidden: bot was blocked by the user"
    await bot.service.destinations.set_active(dest.id, False, blocked)

    fake.push_message(USER, "/start")
    await until(lambda: len(fake.sent_to(USER)) == 2)
    await _until_active(bot, USER, True)


async def test_a_group_upgraded_to_a_supergroup_keeps_its_subscription(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(GROUP, "/subscribe tag:rollout", user_id=ADMIN)
    await until(lambda: fake.sent_to(GROUP))
    upgraded = message_update(fake.state, GROUP, "", ADMIN)
    upgraded["message"].pop("text")  # type: ignore[attr-defined]
    upgraded["message"]["migrate_to_chat_id"] = -1009  # type: ignore[index]

    fake.push_update(upgraded)

    async def moved() -> bool:
        return await destination(bot, -1009) is not None

    await until_async(moved)
    assert await destination(bot, GROUP) is None


async def test_an_update_served_again_after_a_restart_is_handled_once(
    fake: FakeTelegram, tmp_path: Path
) -> None:
    update = message_update(fake.state, USER, "/help", None)
    update["update_id"] = 500
    async with TelegramBot.running(fake, tmp_path):
        fake.push_update(update)
        await until(lambda: fake.sent_to(USER))

    fake.push_update(update)  # Telegram never heard the confirmation: it serves it again
    async with TelegramBot.running(fake, tmp_path):
        fake.push_message(USER, "/tags")
        await until(lambda: len(fake.sent_to(USER)) >= 2)

    shown = texts(fake, USER)
    assert len(shown) == 2
    assert "/subscribe" in shown[0]  # /help
    assert shown[1] == notice("tags_list", items="fix (1), rollout (1)")


async def test_two_pollers_on_one_token_say_why_back_off_and_answer_each_command_once(
    fake: FakeTelegram, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="prdigest.telegram")
    async with (
        TelegramBot.running(fake, tmp_path),
        TelegramBot.running(fake, tmp_path),
    ):
        started = time.monotonic()
        for section in ("summary", "risks", "files"):
            fake.push_message(USER, f"/pr 7422 {section}")
        await until(lambda: len(fake.sent_to(USER)) >= 3, timeout=10)
        await until(lambda: _conflicts(caplog), timeout=10)
        elapsed = time.monotonic() - started
        polls = len(fake.calls("getUpdates"))

    assert len(fake.sent_to(USER)) == 3
    [conflict] = _conflicts(caplog)[:1]
    assert "use webhook mode for several replicas" in conflict.fields["reason"]  # type: ignore[attr-defined]
    assert polls / elapsed < 10, f"{polls} getUpdates in {elapsed:.1f}s: a tight loop"


def _conflicts(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return _events(caplog, "telegram.polling_conflict")


async def _until_active(bot: TelegramBot, chat_id: int, active: bool) -> None:
    async def reached() -> bool:
        dest = await destination(bot, chat_id)
        return dest is not None and dest.active is active

    await until_async(reached)


async def test_a_command_that_fails_tells_the_chat_and_logs_why(
    fake: FakeTelegram,
    bot: TelegramBot,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(*args: object) -> object:
        raise RuntimeError("the store went away")

    monkeypatch.setattr(bot.service.answerer, "answer_text", broken)
    fake.push_message(USER, "/tags")

    await until(lambda: fake.sent_to(USER))
    assert texts(fake, USER) == [notice("error")]
    [failure] = _events(caplog, "telegram.handler_failed")
    assert failure.fields["error"] == "RuntimeError"  # type: ignore[attr-defined]


async def test_a_reply_waiting_for_its_turn_does_not_hold_up_the_shutdown(
    fake: FakeTelegram, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="prdigest.telegram")
    async with TelegramBot.running(fake, tmp_path) as running:
        sender = running.service.senders[Platform.TELEGRAM]
        assert isinstance(sender, TelegramSender)
        sender.pacer.hold(str(USER), 60)  # Telegram said "retry after 60" for this chat
        fake.push_message(USER, "/help")
        await until(lambda: _events(caplog, "telegram.command"))  # answered, now waiting
        stopping = time.monotonic()

    assert time.monotonic() - stopping < 3
    assert fake.sent_to(USER) == []


def _events(caplog: pytest.LogCaptureFixture, event: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if getattr(r, "event", "") == event]
