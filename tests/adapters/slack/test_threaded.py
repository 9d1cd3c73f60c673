"""A threaded digest in Slack: one parent summary in the channel, each tag group a reply in its
thread, not broadcast back to the channel."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.adapters.slack.sender import SlackSender
from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.outbox import plan_digest
from bot.core.models import Platform
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.status import collect
from tests.fakes.slack.api import FakeSlack, Fault
from tests.kits.delivery import FakeClock, add_reports, channel, run_until_idle, setup_destinations

CHANNEL = "C0THREAD"


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        server.add_channel(CHANNEL)
        yield server


async def test_a_threaded_digest_is_one_parent_and_a_reply_per_group_not_broadcast(
    store: ReportStore, fake: FakeSlack
) -> None:
    clock = FakeClock()
    [sub] = await setup_destinations(
        store.engine, channel("team", CHANNEL, platform="slack", layout="threaded")
    )
    await add_reports(store, [1, 2], tags=["rollout"])
    await add_reports(store, [3], tags=["sglang"])
    await plan_digest(store.engine, sub, clock(), Renderer(), clock())
    sender = SlackSender(fake.bot_token, fake.api_url)
    await run_until_idle(Deliverer(store.engine, {Platform.SLACK: sender}, "t", clock), clock, 20)

    parent, *replies = [m for m in fake.posted if m.method == "chat.postMessage"]
    assert parent.thread_ts is None and len(replies) == 2
    assert {reply.thread_ts for reply in replies} == {parent.ts}
    assert all(reply.params.get("reply_broadcast") in (False, "false") for reply in replies)
    assert [reply.text and reply.text.count("change number") for reply in replies] == [2, 1]


async def test_replies_whose_parent_failed_for_good_are_posted_in_the_channel(
    store: ReportStore, fake: FakeSlack
) -> None:
    clock = FakeClock()
    [sub] = await setup_destinations(
        store.engine, channel("team", CHANNEL, platform="slack", layout="threaded")
    )
    await add_reports(store, [1], tags=["rollout"])
    await add_reports(store, [2], tags=["sglang"])
    await plan_digest(store.engine, sub, clock(), Renderer(), clock())
    fake.script("chat.postMessage", Fault.error("restricted_action"))  # the parent, for good
    sender = SlackSender(fake.bot_token, fake.api_url)
    await run_until_idle(Deliverer(store.engine, {Platform.SLACK: sender}, "t", clock), clock, 20)

    replies = [m for m in fake.posted if m.method == "chat.postMessage"]
    assert len(replies) == 2 and all(m.thread_ts is None for m in replies), "not lost"
    [status] = await collect(store.engine)
    assert status.failed == 1


async def test_a_reply_too_big_for_slack_falls_back_to_plain_text_in_the_same_thread(
    store: ReportStore, fake: FakeSlack
) -> None:
    clock = FakeClock()
    [sub] = await setup_destinations(
        store.engine, channel("team", CHANNEL, platform="slack", layout="threaded")
    )
    await add_reports(store, [1], tags=["rollout"])
    await plan_digest(store.engine, sub, clock(), Renderer(), clock())
    sender = SlackSender(fake.bot_token, fake.api_url)
    deliverer = Deliverer(store.engine, {Platform.SLACK: sender}, "t", clock)
    await deliverer.run_once()  # the parent
    fake.script("chat.postMessage", Fault.error("msg_blocks_too_long"))
    await run_until_idle(deliverer, clock, 10)

    parent, reply = [m for m in fake.posted if m.method == "chat.postMessage"]
    assert reply.blocks is None and reply.thread_ts == parent.ts
    assert reply.params.get("reply_broadcast") in (False, "false")


def test_topics_are_refused_on_slack_at_config_load() -> None:
    with pytest.raises(ValueError, match="topics are Telegram forum topics"):
        channel("team", CHANNEL, platform="slack", layout="topics")
