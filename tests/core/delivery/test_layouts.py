"""How a run's messages are queued per layout: threaded rows reply to the summary, topics rows
name their forum topic, and the run takes its lead subscription's layout and verbosity."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update

from bot.core.delivery.outbox import Due, plan_digest, plan_run
from bot.core.models import Layout, Verbosity
from bot.core.render.options import DigestOptions
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.sql.tables import destinations, forum_topics, outbox
from tests.kits.delivery import FakeClock, add_reports, channel, setup_destinations
from tests.kits.render import RecordingRenderer

RENDERER = Renderer()


async def _rows(store: ReportStore) -> list[Any]:
    query = select(outbox.c.part, outbox.c.reply_to_part, outbox.c.topic).order_by(outbox.c.id)
    async with store.engine.connect() as conn:
        return list((await conn.execute(query)).all())


async def _three_groups(store: ReportStore) -> None:
    for n, tag in enumerate(["rollout", "sglang", "trainer"]):
        await add_reports(store, [n + 1], tags=[tag])


async def test_a_threaded_run_queues_every_message_as_a_reply_to_the_summary(
    store: ReportStore,
) -> None:
    clock = FakeClock()
    [sub] = await setup_destinations(store.engine, channel("a", "A", layout="threaded"))
    await _three_groups(store)
    await plan_digest(store.engine, sub, clock(), RENDERER, clock())
    assert [(r.part, r.reply_to_part, r.topic) for r in await _rows(store)] == [
        (0, None, None),
        (1, 0, None),
        (2, 0, None),
        (3, 0, None),
    ]


async def test_a_topics_run_sends_its_summary_to_the_chat_and_each_group_to_its_topic(
    store: ReportStore,
) -> None:
    clock = FakeClock()
    [sub] = await setup_destinations(
        store.engine, channel("a", "-1001", platform="telegram", layout="topics")
    )
    await _three_groups(store)
    await plan_digest(store.engine, sub, clock(), RENDERER, clock())
    assert [r.topic for r in await _rows(store)] == [None, "rollout", "sglang", "trainer"]
    async with store.engine.connect() as conn:
        topics = (await conn.execute(select(forum_topics.c.key, forum_topics.c.thread_id))).all()
        notice = (await conn.execute(select(destinations.c.layout_notice))).scalar()
    assert sorted(topics) == [("rollout", None), ("sglang", None), ("trainer", None)]
    assert notice is not None and "not a forum" in str(notice["text"])


async def test_a_chat_known_not_to_be_a_forum_gets_its_topics_digest_flat(
    store: ReportStore,
) -> None:
    clock = FakeClock()
    [sub] = await setup_destinations(
        store.engine, channel("a", "-1001", platform="telegram", layout="topics")
    )
    async with store.engine.begin() as conn:
        await conn.execute(update(destinations).values(forum=False))
    await _three_groups(store)
    renderer = RecordingRenderer()
    await plan_digest(store.engine, sub, clock(), renderer, clock())
    assert [o.layout for o in renderer.options if o] == [Layout.FLAT]
    assert all(r.topic is None and r.reply_to_part is None for r in await _rows(store))


async def test_a_run_takes_its_lead_subscriptions_layout_and_verbosity(
    store: ReportStore,
) -> None:
    clock = FakeClock()
    lead, other = await setup_destinations(
        store.engine,
        channel("lead", "A", layout="threaded", verbosity="oneline", tags=["rollout"]),
        channel("other", "A", verbosity="full", tags=["sglang"]),
    )
    assert lead.layout is Layout.THREADED and lead.verbosity is Verbosity.ONELINE
    assert other.verbosity is Verbosity.FULL
    await _three_groups(store)
    renderer = RecordingRenderer()
    due = [Due(lead, clock()), Due(other, clock())]
    await plan_run(store.engine, lead.destination_id, due, renderer, clock())
    assert renderer.options == [DigestOptions(layout=Layout.THREADED, verbosity=Verbosity.ONELINE)]
