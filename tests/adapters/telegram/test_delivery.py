"""Digests to Telegram through the outbox: the real sender against the strict fake Bot API.

The fake counts every send against Telegram's flood limits (1/s per chat, 20/min per group,
30/s overall) and answers 429 past them; these tests assert it never had to.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from bot.adapters.telegram.pace import ChatPacer
from bot.adapters.telegram.sender import TelegramSender
from bot.core.clock import utc_clock
from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.ledger import unfinished_count
from bot.core.delivery.outbox import plan_digest
from bot.core.delivery.port import RetryAfter, Sent
from bot.core.digest.select import DigestFilter
from bot.core.models import Locale, Platform
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.status import collect
from bot.core.store.subscriptions import Subscription, SubscriptionStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from tests.fakes.telegram.api import FakeTelegram, Fault
from tests.kits.delivery import (
    FakeClock,
    add_reports,
    report,
    right_away,
    run_until_idle,
    save_chat,
)
from tests.kits.waiting import until_async

RENDERER = Renderer()
FIRE = datetime(2026, 9, 1, 1, 0, tzinfo=UTC)
CANT_PARSE = 'Bad Request: can\'t parse entities: Unsupported start tag "x" at byte offset 0'


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
async def sender(fake: FakeTelegram) -> AsyncIterator[TelegramSender]:
    telegram = TelegramSender(fake.token, fake.url)
    yield telegram
    await telegram.close()


async def subscribe(
    store: ReportStore, fake: FakeTelegram, chat_id: int, *tags: str
) -> Subscription:
    fake.add_chat(chat_id, "private" if chat_id > 0 else "group")
    return await save_chat(
        store.engine,
        Platform.TELEGRAM,
        str(chat_id),
        DigestFilter(tags=tags),
        schedule="0 0 * * *",
        timezone="UTC",
        locale=Locale.EN,
    )


async def deliver_all(store: ReportStore, sender: TelegramSender, timeout: float) -> float:
    """Run the delivery loop (real clock) until the outbox is empty; the seconds it took."""
    deliverer = Deliverer(store.engine, {Platform.TELEGRAM: sender}, "test", utc_clock)
    started = time.monotonic()
    task = asyncio.create_task(deliverer.run_forever())

    async def drained() -> bool:
        return not await unfinished_count(store.engine)

    try:
        await until_async(drained, timeout, "the outbox did not drain in time", every=0.2)
    finally:
        deliverer.stop()
        await task
    return time.monotonic() - started


def long_report(number: int) -> object:
    return report(number, tags=["big"], summary=f"change {number}: " + "长句子。" * 300)


@pytest.mark.slow
async def test_a_digest_to_500_chats_keeps_every_flood_limit_and_arrives_once(
    store: ReportStore, fake: FakeTelegram, sender: TelegramSender
) -> None:
    chats = [10_000 + n for n in range(390)] + [-20_000 - n for n in range(100)]
    big_chats = [30_000 + n for n in range(5)] + [-40_000 - n for n in range(5)]
    dests = [await subscribe(store, fake, chat, "rollout") for chat in chats]
    dests += [await subscribe(store, fake, chat, "big") for chat in big_chats]
    await add_reports(store, range(1, 4), tags=["rollout"])
    await store.upsert_many([(long_report(n), "") for n in range(100, 112)])  # type: ignore[misc]
    planned = {d.target: (await plan_digest(store.engine, d, FIRE, RENDERER, FIRE)).messages
               for d in dests}  # fmt: skip
    assert len(planned) == 500 and min(planned[str(c)] for c in big_chats) >= 3

    took = await deliver_all(store, sender, timeout=90)

    assert fake.flood_429s == 0 and fake.violations == [] and fake.early_retries == []
    received: dict[int, list[float]] = defaultdict(list)
    for message in fake.sent:
        received[message.chat_id].append(message.time)
    assert {str(chat): len(times) for chat, times in received.items()} == planned, "each once"
    gaps = [b - a for times in received.values() for a, b in itertools.pairwise(times)]
    assert min(gaps) >= 1.0, "no chat gets more than one message a second"
    assert took < 60


async def test_a_blocked_chat_gets_at_most_five_attempts_then_nothing(
    store: ReportStore, fake: FakeTelegram, sender: TelegramSender
) -> None:
    clock = FakeClock()
    sender.pacer = ChatPacer(clock=lambda: clock().timestamp())
    blocked = await subscribe(store, fake, 4242, "rollout")
    reader = await subscribe(store, fake, 4343, "rollout")
    fake.script(4242, Fault.blocked_forever)
    await add_reports(store, [1], tags=["rollout"])
    for dest in (blocked, reader):
        await plan_digest(store.engine, dest, clock(), RENDERER, clock())
    deliverer = Deliverer(store.engine, {Platform.TELEGRAM: sender}, "test", clock)

    await run_until_idle(deliverer, clock, 4 * 3600, step=60)

    attempts = [c for c in fake.calls("sendMessage") if c.params["chat_id"] == 4242]
    assert 1 <= len(attempts) <= 5
    assert all(call.status == 403 for call in attempts)
    assert len(fake.sent_to(4343)) == 1
    refreshed = await SubscriptionStore(store.engine).get(blocked.id)
    assert refreshed is not None and not refreshed.active
    assert "blocked" in (refreshed.deactivated_reason or "")
    await add_reports(store, [2], tags=["rollout"])
    await plan_digest(store.engine, refreshed, clock() + timedelta(days=1), RENDERER, clock())
    await run_until_idle(deliverer, clock, 3600, step=60)
    assert len([c for c in fake.calls("sendMessage") if c.params["chat_id"] == 4242]) == len(
        attempts
    )


async def test_a_group_upgraded_to_a_supergroup_gets_the_digest_there_once(
    store: ReportStore, fake: FakeTelegram, sender: TelegramSender
) -> None:
    dest = await subscribe(store, fake, -3001, "rollout")
    fake.script(-3001, Fault.migrated(-1003001))
    await add_reports(store, [1, 2], tags=["rollout"])
    run = await plan_digest(store.engine, dest, FIRE, RENDERER, FIRE)

    await deliver_all(store, sender, timeout=20)

    assert len(fake.sent_to(-1003001)) == run.messages and fake.sent_to(-3001) == []
    moved = await DestinationStore(store.engine).get(dest.destination_id)
    assert moved is not None and moved.target == "-1003001" and moved.active


async def test_markup_telegram_cannot_parse_is_resent_once_as_plain_text(
    fake: FakeTelegram, sender: TelegramSender
) -> None:
    fake.add_chat(4242)

    outcome = await sender.send(
        "4242", {"text": "<b>a & b</b> <i>unclosed", "parse_mode": "HTML"}, right_away
    )

    assert isinstance(outcome, Sent)
    [message] = fake.sent
    assert message.parse_mode is None and message.plain_text == "a & b unclosed"
    assert len(fake.calls("sendMessage")) == 2


async def test_a_message_refused_in_both_forms_is_failed_and_reported(
    store: ReportStore, fake: FakeTelegram, sender: TelegramSender
) -> None:
    dest = await subscribe(store, fake, 4242, "rollout")
    fake.script(4242, Fault(400, CANT_PARSE), Fault(400, CANT_PARSE))
    await add_reports(store, [1], tags=["rollout"])
    await plan_digest(store.engine, dest, FIRE, RENDERER, FIRE)

    await deliver_all(store, sender, timeout=20)

    assert len(fake.calls("sendMessage")) == 2 and fake.sent == []
    [status] = await collect(store.engine, [dest])
    assert status.failed == 1 and "can't parse entities" in (status.last_error or "")


async def test_retry_after_is_waited_out_for_that_chat(
    store: ReportStore, fake: FakeTelegram, sender: TelegramSender
) -> None:
    dest = await subscribe(store, fake, 4242, "rollout")
    fake.script(4242, Fault.retry_after(2))
    await add_reports(store, [1], tags=["rollout"])
    await plan_digest(store.engine, dest, FIRE, RENDERER, FIRE)

    await deliver_all(store, sender, timeout=20)

    first, second = fake.calls("sendMessage")
    assert (first.status, second.status) == (429, 200)
    assert second.time - first.time >= 2.0 and fake.early_retries == []
    assert len(fake.sent_to(4242)) == 1


async def test_a_digest_message_waits_when_the_chat_just_got_a_command_reply(
    fake: FakeTelegram, sender: TelegramSender
) -> None:
    fake.add_chat(4242)
    sender.pacer.record("4242")  # a reply to /pr went out just now

    outcome = await sender.send("4242", {"text": "digest"}, right_away)

    assert isinstance(outcome, RetryAfter) and 0 < outcome.seconds <= 1.1
    assert fake.requests == [], "the API was not asked"


def test_a_chats_next_message_counts_from_the_answer_not_the_departure() -> None:
    now = [1000.0]
    pacer = ChatPacer(clock=lambda: now[0])
    pacer.record("4242")
    now[0] += 0.8  # the request took 0.8 s: it may have reached Telegram just now
    assert pacer.wait_for("4242") == pytest.approx(0.2)
    pacer.answered("4242")
    assert pacer.wait_for("4242") == 1.0


async def test_a_slow_answer_holds_the_chats_next_message_back(
    fake: FakeTelegram, sender: TelegramSender
) -> None:
    fake.add_chat(4242)
    fake.script(4242, Fault.stall(0.6))
    sender.pacer.record("4242")  # a reply to /pr leaves; its answer takes 0.6 s
    first = await sender.deliver("4242", {"text": "first"})
    assert isinstance(first, Sent)

    outcome = await sender.send("4242", {"text": "digest"}, right_away)

    assert isinstance(outcome, RetryAfter) and outcome.seconds > 0.9
    assert len(fake.calls("sendMessage")) == 1


def test_a_group_gets_at_most_twenty_messages_a_minute() -> None:
    now = [1000.0]
    pacer = ChatPacer(clock=lambda: now[0])
    for _ in range(20):
        assert pacer.wait_for("-100") == 0
        pacer.record("-100")
        now[0] += 1.5

    assert pacer.wait_for("-100") > 25  # the first of the twenty leaves the minute at +61 s
    assert pacer.wait_for("4242") == 0
    now[0] += 31.0
    assert pacer.wait_for("-100") == 0


async def test_a_missing_or_odd_retry_after_still_reschedules(
    fake: FakeTelegram, sender: TelegramSender
) -> None:
    fake.add_chat(4242)
    fake.script(4242, Fault(429, "Too Many Requests", {"retry_after": "soon"}))

    outcome = await sender.deliver("4242", {"text": "hi"})

    assert isinstance(outcome, RetryAfter) and outcome.seconds == 5.0
