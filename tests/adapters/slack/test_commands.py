"""What a Slack user sees from `/pr`, from a mention, and from a digest's buttons.

The service's real web app runs in-process over ASGI; Slack is the strict fake, which refuses
anything the real API would (and any live mention), and records what each user was shown.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.core.models import Platform
from bot.core.store.subscriptions import Subscription, SubscriptionStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from tests.fakes.slack.api import Fault, PostedMessage
from tests.kits.slack import (
    ADMIN,
    CHANNEL,
    FLAGS,
    USER,
    SlackBot,
    action_body,
    all_text,
    bot_config,
    channel_posts,
    event_body,
    mention_event,
    slack_bot,
    slash_body,
    wait_for,
)
from tests.kits.waiting import until

ZH_CHANNEL = "C0TEST2"
LOCKED_CHANNEL = "C0TEST4"
DM = "D0TEST1"  # a direct message with the bot: its id starts with D


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    config = bot_config(
        channels=[
            {"name": "zh-team", "platform": "slack", "target": ZH_CHANNEL, "locale": "zh"},
            {"name": "ops", "platform": "slack", "target": LOCKED_CHANNEL, "locked": True},
        ]
    )
    async with slack_bot(tmp_path, config) as running:
        running.fake.add_user(ADMIN, name="root")
        yield running


def _only(messages: list[PostedMessage]) -> PostedMessage:
    assert len(messages) == 1, [m.text for m in messages]
    return messages[0]


# -- /pr -----------------------------------------------------------------------------------------


async def test_pr_risks_shows_the_four_risk_flags_to_the_asker_only(bot: SlackBot) -> None:
    answer = _only(await bot.command("7422 risks"))
    assert answer.response_type == "ephemeral"
    assert answer.user == USER
    for flag in FLAGS:
        assert flag in all_text(answer)


async def test_public_shares_the_answer_with_the_channel(bot: SlackBot) -> None:
    answer = _only(await bot.command("verl-project/verl#7422 public"))
    assert answer.response_type == "in_channel"
    assert "preserve dummy load_format" in all_text(answer)


async def test_the_command_is_acknowledged_without_waiting_for_the_answer(bot: SlackBot) -> None:
    bot.fake.script("response_url", Fault.delay(1.5))
    key, url = bot.response_url()
    started = time.monotonic()
    response = await bot.post(slash_body("7422", url))
    assert response.status_code == 200
    assert time.monotonic() - started < 1.0, "ack must not wait for the answer"
    await wait_for(lambda: bot.answers(key), timeout=5)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "/pr find"),  # bare /pr: the help with every subcommand
        ("7422abc", "Cannot read 7422abc as a PR"),
        ("٧٤٢٢", "Cannot read ٧٤٢٢ as a PR"),
        ("99999999", "No report found for #99999999"),
        ("7422 nonsense", "There is no nonsense section"),
        ("frobnicate now", "Cannot read frobnicate as a PR"),
    ],
)
async def test_bad_input_gets_usage_or_not_found_never_an_error(
    bot: SlackBot, text: str, expected: str
) -> None:
    answer = _only(await bot.command(text))
    assert expected in all_text(answer)
    assert "Something went wrong" not in all_text(answer)
    assert answer.response_type == "ephemeral"


async def test_search_tags_and_help_answer_from_the_store(bot: SlackBot) -> None:
    found = _only(await bot.command("search load_format"))
    assert "#7422" in all_text(found)
    tags = _only(await bot.command("tags"))
    assert "rollout (1)" in all_text(tags)
    helped = _only(await bot.command("help"))
    for line in (
        "/pr 7422 [section]",
        "/pr subscribe QUERY [at CADENCE]",
        "/pr unsubscribe N...|all",
        "/pr subscriptions",
        "/pr schedule",
        "/pr status",
    ):
        assert line in all_text(helped)


async def test_a_configured_channel_is_answered_in_its_locale(bot: SlackBot) -> None:
    answer = _only(await bot.command("99999999", channel=ZH_CHANNEL))
    assert "没有找到 #99999999 的报告" in all_text(answer)


async def test_digest_now_shows_the_channels_next_digest_to_the_asker(bot: SlackBot) -> None:
    answer = _only(await bot.command("digest", channel=ZH_CHANNEL))
    assert answer.response_type == "ephemeral"
    assert "#7422" in all_text(answer)
    assert channel_posts(bot.fake, ZH_CHANNEL) == [], "nothing is posted to the channel"


# -- subscriptions -------------------------------------------------------------------------------


async def _destination(bot: SlackBot, channel: str = CHANNEL) -> object:
    store = DestinationStore(bot.service.ctx.engine)
    return await store.find(Platform.SLACK, channel)


async def _subscriptions(bot: SlackBot, channel: str = CHANNEL) -> list[Subscription]:
    return await SubscriptionStore(bot.service.ctx.engine).of(Platform.SLACK, channel)


async def test_a_non_admin_cannot_subscribe_the_channel(bot: SlackBot) -> None:
    answer = _only(await bot.command("subscribe tag:rollout"))
    assert "Only admins" in all_text(answer)
    assert await _destination(bot) is None
    assert channel_posts(bot.fake, CHANNEL) == []


async def test_an_admin_subscribes_and_the_channel_is_told_who_did_it(bot: SlackBot) -> None:
    answer = _only(await bot.command("subscribe rollout -ci repo:verl-project/verl", user=ADMIN))
    assert "Added subscription 1: tag:rollout -ci repo:verl-project/verl" in all_text(answer)
    announcement = _only(await wait_for(lambda: channel_posts(bot.fake, CHANNEL)))
    assert "alice added subscription 1: tag:rollout -ci repo:verl-project/verl" in all_text(
        announcement
    )
    listed = _only(await bot.command("subscriptions"))
    assert "1. tag:rollout -ci repo:verl-project/verl" in all_text(listed)
    assert "the chat" in all_text(listed), "a channel's subscription is the channel's"
    (sub,) = await _subscriptions(bot)
    assert (sub.filter.query, sub.owner) == ("tag:rollout -ci repo:verl-project/verl", None)


async def test_a_workspace_admin_from_users_info_may_change_subscriptions(bot: SlackBot) -> None:
    bot.fake.add_user("U0WSADMIN", is_admin=True, name="wsadmin")
    _only(await bot.command("subscribe sglang", user="U0WSADMIN"))
    await wait_for(lambda: channel_posts(bot.fake, CHANNEL))
    stopped = _only(await bot.command("unsubscribe all", user="U0WSADMIN"))
    assert "Removed: 1. sglang" in all_text(stopped)
    told = await wait_for(lambda: channel_posts(bot.fake, CHANNEL), count=2)
    assert "alice removed: 1. sglang" in all_text(told[1])
    assert await _subscriptions(bot) == []
    assert len(bot.fake.calls("users.info")) == 1, "the admin answer is cached"


async def test_a_config_subscription_is_changed_in_the_config_not_the_chat(bot: SlackBot) -> None:
    refused = _only(await bot.command("unsubscribe 1", channel=ZH_CHANNEL, user=ADMIN))
    assert "订阅 zh-team 来自配置文件" in all_text(refused)
    added = _only(await bot.command("subscribe ci", channel=ZH_CHANNEL, user=ADMIN))
    assert "已添加订阅 2：ci" in all_text(added), "the chat may add its own beside the config's"
    removed = _only(await bot.command("unsubscribe all", channel=ZH_CHANNEL, user=ADMIN))
    assert "已取消订阅：2. ci" in all_text(removed)
    assert [s.name for s in await _subscriptions(bot, ZH_CHANNEL)] == ["zh-team"]


async def test_a_locked_config_channel_refuses_every_change_from_chat(bot: SlackBot) -> None:
    for text in ("subscribe ci", "unsubscribe all", "schedule 10:00"):
        answer = _only(await bot.command(text, channel=LOCKED_CHANNEL, user=ADMIN))
        assert "locked in the config (channel ops)" in all_text(answer), text
    assert channel_posts(bot.fake, LOCKED_CHANNEL) == []
    (sub,) = await _subscriptions(bot, LOCKED_CHANNEL)
    assert (sub.name, sub.schedule) == ("ops", "0 9 * * mon-fri"), "the config's default"


async def test_a_schedule_with_curly_quotes_from_the_slack_client_is_understood(
    bot: SlackBot,
) -> None:
    _only(await bot.command("subscribe tag:rollout", user=ADMIN))
    answer = _only(await bot.command("schedule “0 9 * * mon-fri” Europe/Berlin", user=ADMIN))
    assert "0 9 * * mon-fri" in all_text(answer)
    (sub,) = await _subscriptions(bot)
    assert (sub.schedule, sub.timezone) == ("0 9 * * mon-fri", "Europe/Berlin")


async def test_anyone_subscribes_in_a_dm_and_owns_it_but_not_in_a_channel(bot: SlackBot) -> None:
    added = _only(await bot.command("subscribe tag:rollout at daily 09:00", channel=DM))
    assert "Added subscription 1: tag:rollout (daily 09:00)" in all_text(added)
    assert added.response_type == "ephemeral"
    listed = _only(await bot.command("subscriptions", channel=DM))
    assert "1. tag:rollout · daily 09:00" in all_text(listed)
    assert "· you" in all_text(listed), "a person's own subscription, in their own DM"
    (sub,) = await _subscriptions(bot, DM)
    assert (sub.owner, sub.schedule) == (USER, "0 9 * * *")
    assert channel_posts(bot.fake, DM) == [], "a DM has nobody else to tell"
    refused = _only(await bot.command("subscribe tag:rollout at daily 09:00"))
    assert "Only admins of this channel" in all_text(refused)
    assert await _subscriptions(bot) == []
    assert bot.fake.calls("users.info"), "the channel asked Slack whether the user is an admin"


# -- mentions ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("show risks for #7422", FLAGS[0]),
        ("#7422 的风险", FLAGS[3]),
        ("what files did 7422 touch", "async_server.py"),
        ("related to 7422", "#7434"),
    ],
)
async def test_a_mention_is_answered_in_its_thread(bot: SlackBot, text: str, expected: str) -> None:
    response = await bot.mention(text, ts="1700000999.000100", event_id="Ev0MENTION1")
    assert response.status_code == 200
    reply = (await wait_for(lambda: channel_posts(bot.fake, CHANNEL)))[0]
    assert reply.thread_ts == "1700000999.000100"
    assert expected in all_text(reply)


async def test_a_mention_inside_a_thread_answers_in_that_thread(bot: SlackBot) -> None:
    event = {"thread_ts": "1700000000.000001"}
    body = event_body({**mention_event("7422", "1700000999.000200"), **event}, "Ev0THREAD")
    assert (await bot.post(body, content_type="application/json")).status_code == 200
    reply = _only(await wait_for(lambda: channel_posts(bot.fake, CHANNEL)))
    assert reply.thread_ts == "1700000000.000001"


async def test_a_retried_event_is_answered_once(
    bot: SlackBot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="prdigest")
    for _ in range(3):
        response = await bot.mention("risks 7422", ts="1700000999.000300", event_id="Ev0RETRY")
        assert response.status_code == 200
    await wait_for(lambda: channel_posts(bot.fake, CHANNEL))
    # both retries are done with: each was found seen before, and left unanswered
    await until(lambda: [r.getMessage() for r in caplog.records].count("slack.seen_before") == 2)
    assert len(channel_posts(bot.fake, CHANNEL)) == 1


async def test_a_mention_without_a_pr_gets_the_help(bot: SlackBot) -> None:
    await bot.mention("hello there", ts="1700000999.000400", event_id="Ev0HELLO")
    reply = _only(await wait_for(lambda: channel_posts(bot.fake, CHANNEL)))
    assert "/pr find" in all_text(reply)


async def test_an_admins_mention_can_subscribe_and_the_channel_learns_their_name(
    bot: SlackBot,
) -> None:
    await bot.mention(
        "subscribe tag:rollout", ts="1700000999.000500", event_id="Ev0SUB", user=ADMIN
    )
    reply, announcement = await wait_for(lambda: channel_posts(bot.fake, CHANNEL), count=2)
    assert reply.thread_ts == "1700000999.000500"
    assert "Added subscription 1: tag:rollout" in all_text(reply)
    assert announcement.thread_ts is None
    assert "root added subscription 1: tag:rollout" in all_text(announcement)


async def test_a_mention_after_the_bot_was_invited_back_resumes_the_digests(
    bot: SlackBot,
) -> None:
    store = DestinationStore(bot.service.ctx.engine)
    dest = await store.find(Platform.SLACK, ZH_CHANNEL)
    assert dest is not None
    await store.set_active(dest.id, False, "not_in_channel")
    await bot.mention("7422", ts="1700000999.000600", event_id="Ev0BACK", channel=ZH_CHANNEL)
    await wait_for(lambda: channel_posts(bot.fake, ZH_CHANNEL))
    resumed = await store.find(Platform.SLACK, ZH_CHANNEL)
    assert resumed is not None
    assert (resumed.active, resumed.deactivated_reason) == (True, None)


async def test_a_mention_does_not_bring_back_subscriptions_the_channel_removed(
    bot: SlackBot,
) -> None:
    _only(await bot.command("subscribe tag:rollout", user=ADMIN))
    _only(await bot.command("unsubscribe all", user=ADMIN))
    await bot.mention("7422", ts="1700000999.000700", event_id="Ev0STOPPED")
    await wait_for(lambda: channel_posts(bot.fake, CHANNEL), count=3)
    assert await _subscriptions(bot) == []
    listed = _only(await bot.command("subscriptions"))
    assert "This channel has no subscription yet" in all_text(listed)


async def test_a_mention_does_not_resume_a_channel_stopped_for_another_reason(
    bot: SlackBot,
) -> None:
    store = DestinationStore(bot.service.ctx.engine)
    dest = await store.find(Platform.SLACK, ZH_CHANNEL)
    assert dest is not None
    await store.set_active(dest.id, False, "token_revoked")
    await bot.mention("7422", ts="1700000999.000800", event_id="Ev0REVOKED", channel=ZH_CHANNEL)
    await wait_for(lambda: channel_posts(bot.fake, ZH_CHANNEL))
    still = await store.find(Platform.SLACK, ZH_CHANNEL)
    assert still is not None
    assert (still.active, still.deactivated_reason) == (False, "token_revoked")


# -- buttons -------------------------------------------------------------------------------------


def _digest_message(channel: str) -> PostedMessage:
    return PostedMessage("chat.postMessage", channel, "1700000500.000100", "digest")


@pytest.mark.parametrize(
    ("action_id", "expected"), [("pr_risks", FLAGS[1]), ("pr_files", "async_server.py")]
)
async def test_a_digest_button_answers_the_presser_only(
    bot: SlackBot, action_id: str, expected: str
) -> None:
    button = {
        "type": "button",
        "action_id": action_id,
        "text": {"type": "plain_text", "text": "Risks"},
        "value": "verl-project/verl#7422",
    }
    key, url = bot.response_url(channel=ZH_CHANNEL)
    response = await bot.post(action_body(button, _digest_message(ZH_CHANNEL), url))
    assert response.status_code == 200
    answer = _only(await wait_for(lambda: bot.answers(key)))
    assert answer.response_type == "ephemeral"
    assert not answer.replace_original
    assert expected in all_text(answer)
