"""Daily, weekly and `now` on one Slack channel, end to end on the strict fake Slack (issue 17):
the config's three entries share the channel; a breaking PR is posted within one tick of being
stored; the daily and the weekly due together post one digest where a PR both match shows once,
and the PR the `now` subscription posted is referred to, not repeated."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from bot.adapters.slack.sender import SlackSender
from bot.core.delivery.deliverer import Deliverer
from bot.core.models import Platform
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import SubscriptionStore
from bot.scheduling.tick import DigestTicker
from bot.settings import BotConfig
from tests.fakes.slack.api import FakeSlack
from tests.kits.delivery import LONG_AGO, FakeClock, add_reports, run_until_idle

TEAM = "C0TEAM"
THURSDAY_0900 = datetime(2026, 9, 3, 9, 0, 5, tzinfo=UTC)
THURSDAY_1402 = datetime(2026, 9, 3, 14, 2, tzinfo=UTC)
FRIDAY_0900 = datetime(2026, 9, 4, 9, 0, 5, tzinfo=UTC)
CONFIG = {
    "timezone": "UTC",
    "locale": "en",
    "channels": [
        {"name": "daily", "platform": "slack", "target": TEAM, "cadence": "daily 09:00"},
        {
            "name": "weekly",
            "platform": "slack",
            "target": TEAM,
            "cadence": "weekly fri 09:00",
            "query": "tag:breaking OR tag:rollout",
        },
        {"name": "breaking", "platform": "slack", "target": TEAM, "cadence": "now",
         "query": "tag:breaking"},
    ],
}  # fmt: skip


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        yield server


def _shown(fake: FakeSlack) -> list[str]:
    """Each posted message as a reader sees it: its blocks' text."""
    return [json.dumps(m.blocks, ensure_ascii=False) for m in fake.posted]


async def test_daily_weekly_and_now_on_one_slack_channel(
    store: ReportStore, fake: FakeSlack
) -> None:
    fake.add_channel(TEAM)
    made = SubscriptionStore(store.engine, clock=lambda: LONG_AGO)  # not new: it catches up
    subs = await made.sync_config(BotConfig.model_validate(CONFIG))
    assert len({s.destination_id for s in subs}) == 1  # three subscriptions, one channel
    clock = FakeClock(THURSDAY_0900)
    ticker = DigestTicker(store.engine, SubscriptionStore(store.engine), Renderer(), clock)
    sender = SlackSender(fake.bot_token, fake.api_url, clock=clock)
    deliverer = Deliverer(store.engine, {Platform.SLACK: sender}, "test", clock)
    await ticker.tick()  # the first start: every catch-up is empty, nothing is posted
    assert fake.posted == []

    clock.now = THURSDAY_1402
    await add_reports(store, [1], tags=["breaking"])
    await add_reports(store, [2], tags=["rollout"])
    await ticker.tick()  # the next tick after they were stored
    await run_until_idle(deliverer, clock, 5)
    [instant] = _shown(fake)
    assert "verl-project/verl · tag view" in instant and "#1" in instant and "#2" not in instant

    clock.now = FRIDAY_0900
    fake.posted.clear()
    await ticker.tick()
    await run_until_idle(deliverer, clock, 5)
    [digest] = _shown(fake)
    assert '"text": "verl-project/verl · tag view"' in digest  # the repo, not the names
    assert "change number 1* · posted 14:02" in digest  # the `now` post, referred to
    assert "one-liner 1" not in digest
    assert digest.count("one-liner 2") == 1 and "matched: daily, weekly" in digest
    await ticker.tick()
    await run_until_idle(deliverer, clock, 5)
    assert len(fake.posted) == 1, "nothing is posted twice"
