"""Slack gets each digest message exactly once: a send whose answer was lost (a reset after
Slack accepted it, or a sender killed mid-send) is looked for in the channel before it is sent
again, by the row's key in the message metadata."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from bot.adapters.slack.sender import METADATA_EVENT, SlackSender
from bot.core.delivery import ledger
from bot.core.delivery.deliverer import LEASE, Deliverer
from bot.core.delivery.outbox import plan_digest
from bot.core.models import Platform
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.sql.tables import outbox
from tests.fakes.slack.api import FakeSlack, Fault
from tests.kits.delivery import FakeClock, add_reports, channel, right_away, setup_destinations

CHANNEL = "C0ONCE"


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        server.add_channel(CHANNEL)
        yield server


async def _planned(store: ReportStore, clock: FakeClock) -> int:
    [sub] = await setup_destinations(store.engine, channel("team", CHANNEL, platform="slack"))
    await add_reports(store, range(1, 4))
    run = await plan_digest(store.engine, sub, clock(), Renderer(), clock())
    return run.messages


def _deliverer(store: ReportStore, fake: FakeSlack, clock: FakeClock, name: str) -> Deliverer:
    sender = SlackSender(fake.bot_token, fake.api_url)
    return Deliverer(store.engine, {Platform.SLACK: sender}, name, clock)


def _posts(fake: FakeSlack) -> list[str]:
    return [m.text or "" for m in fake.posted if m.method == "chat.postMessage"]


async def _sent_ids(store: ReportStore) -> list[str | None]:
    async with store.engine.connect() as conn:
        rows = await conn.execute(select(outbox.c.external_id).order_by(outbox.c.id))
        return list(rows.scalars())


async def test_a_reset_after_slack_accepted_is_found_not_posted_again(
    store: ReportStore, fake: FakeSlack
) -> None:
    clock = FakeClock(datetime.now(UTC))
    messages = await _planned(store, clock)
    fake.script("chat.postMessage", Fault.reset_after_accept())
    deliverer = _deliverer(store, fake, clock, "only")
    await deliverer.run_once()  # accepted by Slack, the answer lost: a Transient, unsure
    clock.advance(3600)
    while await deliverer.run_once():
        clock.advance(3600)
    assert len(_posts(fake)) == messages, "each message once"
    assert len(set(_posts(fake))) == messages
    assert await _sent_ids(store) == [m.ts for m in fake.posted], "the found ts was recorded"
    first = fake.posted[0].metadata or {}
    assert first["event_type"] == METADATA_EVENT
    assert len(fake.calls("conversations.history")) == 1, "looked only for the unsure row"


async def test_a_sender_killed_mid_send_is_not_repeated_by_the_next(
    store: ReportStore, fake: FakeSlack
) -> None:
    clock = FakeClock(datetime.now(UTC))
    messages = await _planned(store, clock)
    [row] = await ledger.claim(store.engine, "dead", clock(), (Platform.SLACK,), 1, LEASE)
    sender = SlackSender(fake.bot_token, fake.api_url)
    await sender.send(CHANNEL, sender.tagged(row.payload, row.key), right_away)  # then killed
    async with store.engine.begin() as conn:  # its lease runs out (or its heartbeat stops)
        await conn.execute(update(outbox).values(lease_until=clock() - timedelta(seconds=1)))
    deliverer = _deliverer(store, fake, clock, "next")
    while await deliverer.run_once():
        clock.advance(3600)
    assert len(_posts(fake)) == messages and len(set(_posts(fake))) == messages


async def test_a_threaded_reply_is_looked_for_in_its_thread(fake: FakeSlack) -> None:
    sender = SlackSender(fake.bot_token, fake.api_url)
    since = datetime.now(UTC)
    parent = await sender.send(CHANNEL, {"text": "summary"}, right_away)
    assert parent.external_id  # type: ignore[union-attr]
    reply = {"text": "[rollout]", "thread_ts": parent.external_id}  # type: ignore[union-attr]
    await sender.send(CHANNEL, sender.tagged(reply, "7@1.0"), right_away)
    found = await sender.find_sent(CHANNEL, reply, "7@1.0", since)
    assert found is not None and found.external_id == fake.posted[-1].ts
    assert await sender.find_sent(CHANNEL, reply, "8@1.0", since) is None
    assert fake.calls("conversations.replies"), "a reply is not in the channel's history"


async def test_history_slack_will_not_show_means_sending_again_not_losing(
    store: ReportStore, fake: FakeSlack
) -> None:
    clock = FakeClock(datetime.now(UTC))
    messages = await _planned(store, clock)
    fake.script("chat.postMessage", Fault.reset_after_accept())
    fake.script("conversations.history", Fault.error("missing_scope", needed="channels:history"))
    deliverer = _deliverer(store, fake, clock, "only")
    while await deliverer.run_once() or await ledger.unfinished_count(store.engine):
        clock.advance(3600)
    assert len(_posts(fake)) == messages + 1, "the unsure one went again: at least once"
