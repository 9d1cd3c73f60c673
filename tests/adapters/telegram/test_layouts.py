"""Threaded and topics digests to Telegram through the outbox, against the strict fake Bot API:
a reply chain under the summary; forum topics opened once per tag and reused; a chat that is
not a forum gets the digest flat and is told so once."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select

from bot.adapters.telegram.pace import ChatPacer
from bot.adapters.telegram.sender import TelegramSender
from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.outbox import plan_digest
from bot.core.models import Platform
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.sql.tables import forum_topics
from bot.core.store.subscriptions import Subscription
from tests.fakes.telegram.api import FakeTelegram
from tests.fakes.telegram.state import SentMessage
from tests.kits.delivery import FakeClock, add_reports, channel, run_until_idle, setup_destinations

RENDERER = Renderer()
GROUP = -1001234  # a supergroup


@pytest.fixture
async def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def fake(clock: FakeClock) -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(clock=lambda: clock().timestamp()) as server:
        yield server


@pytest.fixture
async def sender(fake: FakeTelegram, clock: FakeClock) -> AsyncIterator[TelegramSender]:
    telegram = TelegramSender(fake.token, fake.url)
    telegram.pacer = ChatPacer(clock=lambda: clock().timestamp())
    yield telegram
    await telegram.close()


async def _subscribe(store: ReportStore, layout: str) -> Subscription:
    target = str(GROUP)
    [sub] = await setup_destinations(
        store.engine, channel("team", target, platform="telegram", layout=layout)
    )
    return sub


async def _digest(
    store: ReportStore, sub: Subscription, sender: TelegramSender, clock: FakeClock
) -> None:
    await plan_digest(store.engine, sub, clock(), RENDERER, clock())
    deliverer = Deliverer(store.engine, {Platform.TELEGRAM: sender}, "test", clock)
    await run_until_idle(deliverer, clock, 30)


async def _two_groups(store: ReportStore, first: int = 1) -> None:
    await add_reports(store, [first, first + 1], tags=["rollout"])
    await add_reports(store, [first + 2], tags=["sglang"])


def _topic_of(fake: FakeTelegram, message: SentMessage) -> str | None:
    thread = message.message_thread_id
    return None if thread is None else fake.chats[GROUP].topics[thread]


async def test_a_threaded_digest_is_a_reply_chain_under_its_summary(
    store: ReportStore, fake: FakeTelegram, sender: TelegramSender, clock: FakeClock
) -> None:
    fake.add_chat(GROUP, "supergroup")
    sub = await _subscribe(store, "threaded")
    await _two_groups(store)

    await _digest(store, sub, sender, clock)

    parent, *replies = fake.sent_to(GROUP)
    assert parent.reply_to is None and len(replies) >= 2
    assert {reply.reply_to for reply in replies} == {parent.message_id}
    calls = [c.params for c in fake.calls("sendMessage") if "reply_parameters" in c.params]
    assert calls and all(
        c["reply_parameters"]
        == {"message_id": parent.message_id, "allow_sending_without_reply": True}
        for c in calls
    )
    assert "rollout" in " ".join(r.plain_text for r in replies)


async def test_topics_are_opened_once_per_tag_and_reused_by_the_next_digest(
    store: ReportStore, fake: FakeTelegram, sender: TelegramSender, clock: FakeClock
) -> None:
    fake.add_chat(GROUP, "supergroup", is_forum=True)
    fake.set_member(GROUP, fake.bot_id, "administrator")
    sub = await _subscribe(store, "topics")
    await _two_groups(store)

    await _digest(store, sub, sender, clock)

    summary, *grouped = fake.sent_to(GROUP)
    assert summary.message_thread_id is None  # the General topic
    assert {_topic_of(fake, m) for m in grouped} == {"rollout", "sglang"}
    assert sorted(str(c.params["name"]) for c in fake.calls("createForumTopic")) == [
        "rollout",
        "sglang",
    ]

    clock.advance(3600)
    await add_reports(store, [10], tags=["rollout"])
    await _digest(store, sub, sender, clock)

    assert len(fake.calls("createForumTopic")) == 2, "the rollout topic is reused"
    later = fake.sent_to(GROUP)[len(grouped) + 1 :]
    assert [_topic_of(fake, m) for m in later] == [None, "rollout"]
    async with store.engine.connect() as conn:
        rows = (await conn.execute(select(forum_topics.c.key, forum_topics.c.thread_id))).all()
    assert {key for key, thread in rows if thread} == {"rollout", "sglang"}


async def test_topics_in_a_chat_that_is_not_a_forum_post_flat_and_say_so_once(
    store: ReportStore, fake: FakeTelegram, sender: TelegramSender, clock: FakeClock
) -> None:
    fake.add_chat(GROUP, "supergroup")  # topics off
    fake.set_member(GROUP, fake.bot_id, "administrator")
    sub = await _subscribe(store, "topics")
    await _two_groups(store)

    await _digest(store, sub, sender, clock)
    clock.advance(3600)
    await add_reports(store, [10], tags=["rollout"])
    await _digest(store, sub, sender, clock)

    sent = fake.sent_to(GROUP)
    assert all(m.message_thread_id is None for m in sent)
    notices = [m for m in sent if "not a forum" in m.plain_text]
    assert len(notices) == 1, [m.plain_text for m in sent]
    [refused] = fake.calls("createForumTopic")
    assert refused.status == 400 and refused.description == "Bad Request: the chat is not a forum"
    assert "change number 10" in sent[-1].plain_text, "the second digest came flat, no notice"
    texts = " ".join(m.plain_text for m in sent)
    assert all(f"change number {n}" in texts for n in (1, 2, 3, 10)), "nothing lost"


async def test_a_topic_deleted_in_the_chat_is_opened_again_and_nothing_is_lost(
    store: ReportStore, fake: FakeTelegram, sender: TelegramSender, clock: FakeClock
) -> None:
    fake.add_chat(GROUP, "supergroup", is_forum=True)
    fake.set_member(GROUP, fake.bot_id, "administrator")
    sub = await _subscribe(store, "topics")
    await add_reports(store, [1], tags=["rollout"])
    await _digest(store, sub, sender, clock)
    fake.chats[GROUP].topics.clear()  # someone deleted the rollout topic

    clock.advance(3600)
    await add_reports(store, [2], tags=["rollout"])
    await _digest(store, sub, sender, clock)

    assert [str(c.params["name"]) for c in fake.calls("createForumTopic")] == ["rollout"] * 2
    last = fake.sent_to(GROUP)[-1]
    assert "change number 2" in last.plain_text and _topic_of(fake, last) == "rollout"


async def test_topics_turned_on_later_are_used_from_the_next_day_without_a_second_notice(
    store: ReportStore, fake: FakeTelegram, sender: TelegramSender, clock: FakeClock
) -> None:
    chat = fake.add_chat(GROUP, "supergroup")
    fake.set_member(GROUP, fake.bot_id, "administrator")
    sub = await _subscribe(store, "topics")
    await _two_groups(store)
    await _digest(store, sub, sender, clock)
    before = len(fake.sent_to(GROUP))

    chat.is_forum = True  # an admin turns topics on
    clock.advance(25 * 3600)
    await add_reports(store, [10], tags=["rollout"])
    await _digest(store, sub, sender, clock)

    summary, grouped = fake.sent_to(GROUP)[before:]
    assert summary.message_thread_id is None and _topic_of(fake, grouped) == "rollout"
    assert sum("not a forum" in m.plain_text for m in fake.sent_to(GROUP)) == 1
