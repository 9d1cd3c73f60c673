"""Digests to Feishu through the outbox: the real sender against the strict fake Open API."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from bot.adapters.lark.client import LarkClient
from bot.adapters.lark.sender import LarkSender, message_uuid
from bot.core.clock import utc_clock
from bot.core.delivery import ledger
from bot.core.delivery.deliverer import LEASE, Deliverer
from bot.core.delivery.ledger import unfinished_count
from bot.core.delivery.outbox import plan_digest
from bot.core.delivery.port import RetryAfter, Sent
from bot.core.models import Platform
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.sql.tables import outbox
from bot.core.store.subscriptions import Subscription, SubscriptionStore
from tests.fakes.lark.api import FakeLark, Fault
from tests.kits.delivery import FakeClock, add_reports, channel, right_away, setup_destinations
from tests.kits.waiting import until_async

RENDERER = Renderer()
GROUP = "oc_team000001"
FIRE = datetime(2026, 9, 1, 1, 0, tzinfo=UTC)


@pytest.fixture
async def fake() -> AsyncIterator[FakeLark]:
    async with FakeLark() as server:
        server.add_chat(GROUP)
        yield server


@pytest.fixture
async def sender(fake: FakeLark) -> AsyncIterator[LarkSender]:
    lark = LarkSender(LarkClient(fake.app_id, fake.app_secret, fake.url))
    yield lark
    await lark.close()


async def subscribe(store: ReportStore, **extra: object) -> Subscription:
    """A config channel on the group (its `oc_` target checked as the config checks it)."""
    lark = channel("team", GROUP, platform="lark", locale="en", **extra)
    [sub] = await setup_destinations(store.engine, lark)
    return sub


async def deliver_all(store: ReportStore, sender: LarkSender, timeout: float = 20) -> None:
    deliverer = Deliverer(store.engine, {Platform.LARK: sender}, "test", utc_clock)
    task = asyncio.create_task(deliverer.run_forever())

    async def drained() -> bool:
        return not await unfinished_count(store.engine)

    try:
        await until_async(drained, timeout, "the outbox did not drain in time", every=0.1)
    finally:
        deliverer.stop()
        await task


def _buttons(card: dict[str, object]) -> list[list[str]]:
    """Per entry (an action row), the labels and the overflow's option values."""
    rows = []
    for element in card["elements"]:  # type: ignore[attr-defined]
        if element["tag"] == "action":
            row = []
            for action in element["actions"]:
                if action["tag"] == "button":
                    row.append(action["value"]["data"].split(":")[0])
                else:
                    row += ["menu:" + o["value"].split(":")[0] for o in action["options"]]
            rows.append(row)
    return rows


async def test_a_scheduled_digest_arrives_in_the_group_as_cards(
    store: ReportStore, fake: FakeLark, sender: LarkSender
) -> None:
    sub = await subscribe(store)
    await add_reports(store, range(1, 6), tags=["rollout"])
    run = await plan_digest(store.engine, sub, FIRE, RENDERER, FIRE)

    await deliver_all(store, sender)

    cards = [p.card for p in fake.sent_to(GROUP)]
    assert len(cards) == run.messages == 1
    card = cards[0]
    assert "verl" in card["header"]["title"]["content"]
    rows = _buttons(card)
    assert len(rows) == 5, "one action row per entry"
    assert all(row == ["read", "report", "menu:snooze", "menu:mute", "menu:risks"] for row in rows)
    texts = [e["text"]["content"] for e in card["elements"] if e["tag"] == "div"]
    assert texts[0] == "**[rollout]**" and "github.com/verl-project/verl/pull/1" in texts[1]
    assert card["elements"][-1]["tag"] == "note", "the legend closes the card"
    assert all(p.uuid and p.uuid.startswith("prdigest-") for p in fake.posted)


async def test_a_long_digest_is_split_and_never_cuts_a_heading_from_its_entry(
    store: ReportStore, fake: FakeLark, sender: LarkSender
) -> None:
    await add_reports(store, range(1, 41), tags=["rollout"])
    sub = await subscribe(store, verbosity="full", max_items=40)
    run = await plan_digest(store.engine, sub, FIRE, RENDERER, FIRE)

    await deliver_all(store, sender)

    cards = [p.card for p in fake.sent_to(GROUP)]
    assert len(cards) == run.messages >= 1
    for card in cards:
        last = card["elements"][-1]
        assert not (last["tag"] == "div" and last["text"]["content"].startswith("**[")), "heading"


async def test_a_threaded_digest_replies_in_the_summary_cards_thread(
    store: ReportStore, fake: FakeLark, sender: LarkSender
) -> None:
    sub = await subscribe(store, layout="threaded")
    await add_reports(store, range(1, 4), tags=["rollout"])
    await add_reports(store, range(4, 6), tags=["sglang"])
    run = await plan_digest(store.engine, sub, FIRE, RENDERER, FIRE)

    await deliver_all(store, sender)

    parent, *replies = fake.sent_to(GROUP)
    assert len(replies) == run.messages - 1 >= 2
    assert parent.parent_id is None and all(r.parent_id == parent.message_id for r in replies)
    assert all(r.in_thread for r in replies), "replies go in the card's thread"


async def test_a_sender_killed_mid_send_posts_nothing_twice(
    store: ReportStore, fake: FakeLark, sender: LarkSender
) -> None:
    clock = FakeClock(datetime.now(UTC))
    sub = await subscribe(store)
    await add_reports(store, range(1, 4), tags=["rollout"])
    run = await plan_digest(store.engine, sub, clock(), RENDERER, clock())
    [row] = await ledger.claim(store.engine, "dead", clock(), (Platform.LARK,), 1, LEASE)
    first = await sender.send(GROUP, sender.tagged(row.payload, row.key), right_away)  # killed
    async with store.engine.begin() as conn:  # its lease runs out
        await conn.execute(update(outbox).values(lease_until=clock() - timedelta(seconds=1)))
    deliverer = Deliverer(store.engine, {Platform.LARK: sender}, "next", clock)
    while await deliverer.run_once():
        clock.advance(60)

    assert isinstance(first, Sent)
    assert len(fake.posted) == run.messages, "the resend was dropped by its uuid"
    resent = [c for c in fake.calls if c.body.get("uuid") == message_uuid(row.key)]
    assert len(resent) == 2 and resent[0].status == resent[1].status == 200


async def test_a_bot_removed_from_the_group_deactivates_the_destination(
    store: ReportStore, fake: FakeLark, sender: LarkSender
) -> None:
    sub = await subscribe(store)
    fake.remove_bot(GROUP)
    await add_reports(store, [1], tags=["rollout"])
    await plan_digest(store.engine, sub, FIRE, RENDERER, FIRE)

    await deliver_all(store, sender)

    refreshed = await SubscriptionStore(store.engine).get(sub.id)
    assert refreshed is not None and not refreshed.active
    assert "230002" in (refreshed.deactivated_reason or "")
    assert fake.posted == [] and len(fake.calls) == 2, "the token, then one refused send"


async def test_a_rate_limit_answer_paces_the_chat(
    store: ReportStore, fake: FakeLark, sender: LarkSender
) -> None:
    sub = await subscribe(store)
    fake.script(GROUP, Fault(429, 99991400, "request trigger frequency limit"))
    await add_reports(store, [1], tags=["rollout"])
    await plan_digest(store.engine, sub, FIRE, RENDERER, FIRE)
    started = time.monotonic()

    await deliver_all(store, sender)

    sends = [c for c in fake.calls if c.path.startswith("/open-apis/im")]
    assert [c.code for c in sends] == [99991400, 0]
    assert sends[1].time - sends[0].time >= 4.9, "waited the default 5 s (no reset header)"
    assert time.monotonic() - started >= 4.9 and len(fake.posted) == 1


async def test_a_chat_rate_limit_is_a_short_wait_and_an_expired_token_is_renewed(
    fake: FakeLark, sender: LarkSender
) -> None:
    fake.script(GROUP, Fault(400, 230020, "This operation triggers the frequency limit."))
    outcome = await sender.send(GROUP, {"card": {"elements": []}}, right_away)
    assert isinstance(outcome, RetryAfter) and outcome.seconds == 1.0
    fake.expire_tokens()
    card = {"elements": [{"tag": "hr"}]}
    assert isinstance(await sender.send(GROUP, {"card": card}, right_away), Sent)
    assert len(fake.tokens) == 1 and len(fake.posted) == 1
