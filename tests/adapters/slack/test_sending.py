"""Digests to Slack through the outbox: a channel that is gone is switched off with the reason,
a rate limit reschedules by its Retry-After, and every call stays within the Web API spec."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from bot.adapters.slack.sender import DEFAULT_RETRY_AFTER, SlackSender
from bot.core.clock import utc_clock
from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.outbox import plan_digest
from bot.core.delivery.port import RetryAfter, Sent
from bot.core.models import Platform
from bot.core.render.limits.slack import SLACK_PER_CHANNEL_INTERVAL
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.status import collect
from bot.core.store.subscriptions.destination_store import DestinationStore
from tests.fakes.slack.api import FakeSlack, Fault
from tests.kits.delivery import add_reports, channel, right_away, setup_destinations


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        yield server


def _sender(fake: FakeSlack) -> SlackSender:
    return SlackSender(fake.bot_token, fake.api_url)


@pytest.mark.parametrize(
    "reason", ["channel_not_found", "not_in_channel", "is_archived", "token_revoked"]
)
async def test_a_channel_slack_refuses_for_good_is_deactivated_with_the_reason(
    store: ReportStore, fake: FakeSlack, reason: str
) -> None:
    target = {"channel_not_found": "C0NOPE"}.get(reason, "C0TEST1")
    if reason == "not_in_channel":
        fake.add_channel(target, bot_member=False)
    elif reason == "is_archived":
        fake.add_channel(target, archived=True)
    elif reason == "token_revoked":
        fake.revoke_token()
    [sub] = await setup_destinations(store.engine, channel("team", target, platform="slack"))
    await add_reports(store, range(1, 4))
    now = datetime.now(UTC)
    await plan_digest(store.engine, sub, now, Renderer(), now)
    deliverer = Deliverer(store.engine, {Platform.SLACK: _sender(fake)}, "test", utc_clock)
    assert await deliverer.run_once() == 1
    after = await DestinationStore(store.engine).get(sub.destination_id)
    assert after is not None
    assert (after.active, after.deactivated_reason) == (False, reason)
    [state] = await collect(store.engine)
    assert (state.active, state.deactivated_reason) == (False, reason)
    assert fake.posted == []


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("7", 7.0), ("2.5", 2.5), ("abc", DEFAULT_RETRY_AFTER), (None, DEFAULT_RETRY_AFTER)],
)
async def test_a_rate_limit_is_rescheduled_by_its_retry_after(
    fake: FakeSlack, header: str | None, seconds: float
) -> None:
    fake.script("chat.postMessage", Fault.rate_limited(retry_after=header))
    sender = _sender(fake)
    payload = {"text": "hello", "unfurl_links": False}
    assert await sender.send("C0TEST1", payload, right_away) == RetryAfter(seconds)
    sent = await sender.send("C0TEST1", payload, right_away)
    assert isinstance(sent, Sent)
    assert sent.external_id == fake.posted[0].ts
    assert len(fake.calls("chat.postMessage")) == 2, "the SDK did not retry on its own"


def test_the_slack_pace_is_one_message_per_second_per_channel(fake: FakeSlack) -> None:
    assert _sender(fake).interval_for("C0TEST1") == SLACK_PER_CHANNEL_INTERVAL == 1.0
