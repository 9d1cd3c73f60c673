"""`/pr subscribe` with no arguments, as a user does it against the strict fake Slack: the
modal opens (views.open, with the trigger_id Slack put in the command), the user picks tags,
an impact and a cadence, submits, and the channel hears of the new subscription."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from bot.core.models import Platform
from bot.core.render.slack import mrkdwn_to_plain
from bot.core.reports.model import Report
from bot.core.store.subscriptions import Subscription, SubscriptionStore
from tests.fakes.slack.api import PostedMessage
from tests.fakes.slack.interactions import Inbound
from tests.fakes.slack.views import FakeView
from tests.kits.slack import (
    ADMIN,
    CHANNEL,
    SIGNING_SECRET,
    USER,
    SlackBot,
    bot_config,
    channel_posts,
    slack_bot,
    wait_for,
)
from tests.kits.waiting import until

DM = "D0TEST1"  # USER's direct messages with the bot


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with slack_bot(tmp_path, bot_config()) as running:
        running.fake.add_user(ADMIN, name="root")
        running.fake.add_channel(DM)
        # The seed report is tagged rollout and fix; one more makes the counts differ.
        await running.service.ctx.reports.upsert(
            Report(repo="sgl/sglang", number=5, title="ci: faster", tags=["rollout", "ci"]), ""
        )
        yield running
    assert running.fake.violations == []


async def _send(bot: SlackBot, inbound: Inbound) -> httpx.Response:
    headers = inbound.headers(SIGNING_SECRET)
    response = await bot.http.post("/slack/events", content=inbound.body, headers=headers)
    assert response.status_code == 200, response.text
    return response


async def _open_modal(bot: SlackBot, channel: str, user: str) -> FakeView:
    await _send(bot, bot.fake.interactions.slash_command("subscribe", channel=channel, user=user))
    views = await until(lambda: [v for v in bot.fake.views_for(user) if v.type == "modal"], 10)
    assert [c.method for c in bot.fake.view_calls] == ["views.open"]
    view: FakeView = views[0]
    return view


def _options(view: FakeView, block_id: str) -> list[str]:
    block = next(b for b in view.current["blocks"] if b.get("block_id") == block_id)
    return [option["text"]["text"] for option in block["element"]["options"]]


async def _subscriptions(bot: SlackBot, target: str) -> list[Subscription]:
    return await SubscriptionStore(bot.service.ctx.engine).of(Platform.SLACK, target)


def _ephemeral(bot: SlackBot, user: str) -> list[PostedMessage]:
    return [m for m in bot.fake.posted if m.method == "chat.postEphemeral" and m.user == user]


async def test_an_admin_picks_in_the_modal_and_the_channel_gets_the_subscription(
    bot: SlackBot,
) -> None:
    view = await _open_modal(bot, CHANNEL, ADMIN)
    assert view.current["title"]["text"] == "Subscribe"
    assert _options(view, "tags") == ["rollout (2)", "ci (1)", "fix (1)"], "counts, most first"
    assert _options(view, "repos") == ["sgl/sglang (1)", "verl-project/verl (1)"]
    assert _options(view, "cadence")[-1] == "at once, as PRs arrive"
    choices = {"tags": ["rollout", "fix"], "impact": "medium", "cadence": "weekly fri 17:00"}
    response = await _send(bot, bot.fake.interactions.view_submission(view.id, choices))
    assert response.content in (b"", b"null"), "the modal closes"
    announced = await wait_for(lambda: channel_posts(bot.fake, CHANNEL))
    query = "(tag:rollout OR tag:fix) impact>=medium"
    assert _plain(announced[0]) == f"root added subscription 1: {query} (weekly fri 17:00)"
    told = await wait_for(lambda: _ephemeral(bot, ADMIN))
    assert _plain(told[0]).startswith(f"Added subscription 1: {query} (weekly fri 17:00)")
    [sub] = await _subscriptions(bot, CHANNEL)
    assert (sub.filter.query, sub.cadence, sub.owner) == (query, "weekly fri 17:00", None)


async def test_a_member_is_told_only_admins_may_and_no_modal_opens(bot: SlackBot) -> None:
    await _send(bot, bot.fake.interactions.slash_command("subscribe", channel=CHANNEL, user=USER))
    answers = await wait_for(lambda: [m for m in bot.fake.posted if m.method == "response_url"])
    assert answers[0].text == "Only admins of this channel can change its subscriptions."
    assert bot.fake.view_calls == []
    assert await _subscriptions(bot, CHANNEL) == []


async def test_submitting_nothing_keeps_the_modal_open_with_a_hint(bot: SlackBot) -> None:
    view = await _open_modal(bot, CHANNEL, ADMIN)
    response = await _send(bot, bot.fake.interactions.view_submission(view.id, {}))
    assert response.json() == {
        "response_action": "errors",
        "errors": {"tags": "Pick at least one tag, repo or minimum impact."},
    }
    assert [v.id for v in bot.fake.views_for(ADMIN)] == [view.id]
    assert await _subscriptions(bot, CHANNEL) == []


async def test_anyone_subscribes_for_themselves_from_the_modal_in_their_dm(bot: SlackBot) -> None:
    view = await _open_modal(bot, DM, USER)
    assert "subscription of your own" in view.current["blocks"][0]["text"]["text"]
    choices = {"repos": ["sgl/sglang"], "cadence": "now"}
    await _send(bot, bot.fake.interactions.view_submission(view.id, choices))
    told = await wait_for(lambda: channel_posts(bot.fake, DM))
    assert (told[0].text or "").startswith("Added subscription 1: repo:sgl/sglang (now)")
    [sub] = await _subscriptions(bot, DM)
    assert (sub.filter.query, sub.cadence, sub.owner) == ("repo:sgl/sglang", "now", USER)
    assert channel_posts(bot.fake, CHANNEL) == [], "a DM has nobody else to tell"


def _plain(message: PostedMessage) -> str:
    """The message's text as the reader sees it (Slack shows `&gt;` as `>`)."""
    return mrkdwn_to_plain(message.text or "")
