"""Two replicas deliver topics digests to the same forum chats on PostgreSQL: each forum topic
is opened once, and every tag group's messages go to its topic (strict fake Bot API)."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from bot.adapters.telegram.sender import TelegramSender
from bot.core.clock import utc_clock
from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.ledger import unfinished_count
from bot.core.delivery.outbox import plan_digest
from bot.core.models import Platform
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate
from bot.core.store.sql.tables import forum_topics
from tests.fakes.telegram.api import FakeTelegram
from tests.kits.delivery import add_reports, channel, setup_destinations
from tests.kits.waiting import until_async

CHATS = [-1_009_000 - n for n in range(6)]
TAGS = ["rollout", "sglang", "trainer"]
DRAIN_SECONDS = 60.0


@pytest.mark.slow  # ~15 s: two replicas paced by Telegram's real-time limits
async def test_two_replicas_open_each_forum_topic_once(postgres_database_url: str) -> None:
    engines = [create_engine(postgres_database_url) for _ in range(2)]
    await migrate(engines[0])
    store = ReportStore(engines[0])
    async with FakeTelegram() as fake:
        for chat in CHATS:
            fake.add_chat(chat, "supergroup", is_forum=True)
            fake.set_member(chat, fake.bot_id, "administrator")
        subs = await setup_destinations(
            engines[0],
            *(
                channel(f"t{n}", str(c), platform="telegram", layout="topics")
                for n, c in enumerate(CHATS)
            ),
        )
        for n, tag in enumerate(TAGS):
            await add_reports(store, [n + 1], tags=[tag])
        now = datetime.now(UTC)
        renderer = Renderer()
        await asyncio.gather(
            *(plan_digest(engine, sub, now, renderer, now) for sub in subs for engine in engines)
        )
        senders = [TelegramSender(fake.token, fake.url) for _ in engines]
        replicas = [
            Deliverer(engine, {Platform.TELEGRAM: sender}, f"replica{n}", utc_clock)
            for n, (engine, sender) in enumerate(zip(engines, senders, strict=True))
        ]
        tasks = [asyncio.create_task(replica.run_forever()) for replica in replicas]
        try:

            async def delivered() -> bool:
                return not await unfinished_count(engines[0])

            await until_async(delivered, DRAIN_SECONDS, "not delivered in time", every=0.2)
        finally:
            for replica in replicas:
                replica.stop()
            await asyncio.gather(*tasks)
            for sender in senders:
                await sender.close()

        opened = Counter(
            (c.params["chat_id"], c.params["name"]) for c in fake.calls("createForumTopic")
        )
        assert opened == Counter({(chat, tag): 1 for chat in CHATS for tag in TAGS})
        for chat in CHATS:
            summary, *grouped = fake.sent_to(chat)
            topics = fake.chats[chat].topics
            assert summary.message_thread_id is None
            assert (
                sorted(topics[m.message_thread_id] for m in grouped if m.message_thread_id) == TAGS
            )
            assert len(grouped) == len(TAGS)
        async with engines[0].connect() as conn:
            recorded = (await conn.execute(select(forum_topics.c.thread_id))).scalars().all()
        assert len(recorded) == len(CHATS) * len(TAGS) and all(recorded)
    for engine in engines:
        await engine.dispose()
