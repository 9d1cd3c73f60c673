"""Slack's App Home as a person sees it on the strict fake: their own subscriptions (made in
their DM) with add and remove buttons, the digest channels they are in, and the newest
must-read PRs their subscriptions match."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.core.models import Platform
from bot.core.store.subscriptions import Subscription, SubscriptionStore
from tests.fakes.slack.interactions import Inbound
from tests.fakes.slack.views import FakeView
from tests.kits.slack import SIGNING_SECRET, USER, SlackBot, bot_config, channel_posts, slack_bot
from tests.kits.waiting import until

DM = "D0TEST1"  # USER's direct messages with the bot
MINE, NOT_MINE, QUIET = "C0TEST2", "C0TEST3", "C0TEST1"


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    config = bot_config(
        channels=[
            {"name": "team", "platform": "slack", "target": MINE},
            {"name": "others", "platform": "slack", "target": NOT_MINE},
        ]
    )
    async with slack_bot(tmp_path, config) as running:
        running.fake.add_channel(DM)
        running.fake.channels[MINE].members = {USER, "U0OTHER"}
        running.fake.channels[NOT_MINE].members = {"U0OTHER"}
        running.fake.channels[QUIET].members = {USER}  # no digests there
        yield running
    assert running.fake.violations == []


async def _send(bot: SlackBot, inbound: Inbound) -> None:
    headers = inbound.headers(SIGNING_SECRET)
    response = await bot.http.post("/slack/events", content=inbound.body, headers=headers)
    assert response.status_code == 200, response.text


def _published(bot: SlackBot) -> int:
    return len([c for c in bot.fake.view_calls if c.method == "views.publish"])


async def _open_home(bot: SlackBot) -> FakeView:
    before = _published(bot)
    await _send(bot, bot.fake.interactions.app_home_opened(USER))
    await until(lambda: _published(bot) > before, 10)
    home = bot.fake.views.home_of(USER)
    assert home is not None
    return home


def _texts(view: FakeView) -> list[str]:
    return [str(b["text"]["text"]) for b in view.current["blocks"] if "text" in b]


async def _mine(bot: SlackBot) -> list[Subscription]:
    return await SubscriptionStore(bot.service.ctx.engine).of(Platform.SLACK, DM)


async def test_home_lists_a_dm_subscription_channels_and_must_reads(bot: SlackBot) -> None:
    await bot.command("subscribe tag:rollout at now", channel=DM)
    home = await _open_home(bot)
    texts = _texts(home)
    assert "1. tag:rollout · now · next now" in texts
    assert "• <#C0TEST2>" in texts, "the digest channel they are in, not the others"
    must_read = next(t for t in texts if "verl-project/verl#" in t)
    assert must_read.startswith("• <http") and "|verl-project/verl#7422 [rollout]" in must_read
    remove = next(b["accessory"] for b in home.current["blocks"] if "accessory" in b)
    assert (remove["text"]["text"], remove["value"]) == ("Remove", f"{DM}:1")


async def test_must_reads_are_only_those_the_subscriptions_match(bot: SlackBot) -> None:
    await bot.command("subscribe tag:ci", channel=DM)
    texts = _texts(await _open_home(bot))
    assert "No must-read PR matches your subscriptions yet." in texts
    assert not any("verl-project/verl#" in t for t in texts)


async def test_the_remove_button_removes_the_subscription_and_the_home_shows_it(
    bot: SlackBot,
) -> None:
    await bot.command("subscribe tag:rollout at daily 09:00", channel=DM)
    home = await _open_home(bot)
    before = _published(bot)
    await _send(bot, bot.fake.interactions.block_actions("home_remove", view_id=home.id))
    await until(lambda: _published(bot) > before, 10)
    assert await _mine(bot) == []
    assert any("None yet" in text for text in _texts(home))
    told = await until(
        lambda: [m for m in channel_posts(bot.fake, DM) if "Removed" in (m.text or "")], 10
    )
    assert told[0].text == "Removed: 1. tag:rollout"


async def test_the_add_button_opens_the_modal_for_the_dm(bot: SlackBot) -> None:
    home = await _open_home(bot)
    assert any("None yet" in text for text in _texts(home))
    await _send(bot, bot.fake.interactions.block_actions("home_add", view_id=home.id))
    modal = await until(lambda: [v for v in bot.fake.views_for(USER) if v.type == "modal"], 10)
    assert json.loads(modal[0].current["private_metadata"])["channel"] == DM
    before = _published(bot)
    choices = {"tags": ["fix"], "cadence": "workdays 09:30"}
    await _send(bot, bot.fake.interactions.view_submission(modal[0].id, choices))
    await until(lambda: _published(bot) > before, 10)
    [sub] = await _mine(bot)
    assert (sub.filter.query, sub.cadence, sub.owner) == ("tag:fix", "workdays 09:30", USER)
    assert "1. tag:fix · workdays 09:30" in " ".join(_texts(home))


async def test_the_messages_tab_publishes_nothing(bot: SlackBot) -> None:
    await _send(bot, bot.fake.interactions.app_home_opened(USER, tab="messages"))
    await bot.command("help", channel=DM)  # answered after the event was handled
    assert _published(bot) == 0
