"""PostgreSQL connections dropped while digests are delivered: nothing lost, nothing twice.

The delivery layer as the service runs it (outbox, `Deliverer.run_forever`, the real
`SlackSender` and `TelegramSender`, the shared PostgreSQL pace) delivers digests to Slack
channels and Telegram chats on the loopback fakes, in real time. Meanwhile a side task
terminates every PostgreSQL backend of the deliverer's engine every 0.2 s (found by the
`application_name` its URL sets, so other tests' connections live on): claims, pace slots and
the writes that record a send's result fail at random points. Expected: nothing lost, and no
message twice, since no process is killed (only a kill inside a send may duplicate); no
"Task exception was never retrieved" either.

Sample: 2 Slack + 2 Telegram destinations, 3 s of terminations, in `SLOW=1 make test` (CI);
`pytest -m faults`: 40 + 40, 20 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import select, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.adapters.slack.sender import SlackSender
from bot.adapters.telegram.sender import TelegramSender
from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.ledger import unfinished_count
from bot.core.delivery.outbox import plan_digest
from bot.core.delivery.port import Sender
from bot.core.models import Platform
from bot.core.render.renderer import Renderer
from bot.core.store.editions import PAYLOAD
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate
from bot.core.store.sql.tables import destinations, outbox
from tests.fakes.slack.api import FakeSlack
from tests.fakes.telegram.api import FakeTelegram
from tests.kits.delivery import add_reports, channel, setup_destinations
from tests.kits.faults import counts, report_line

pytestmark = pytest.mark.slow

KILL_EVERY_SECONDS = 0.2
FULL_KILL_SECONDS = 20.0
SAMPLE_KILL_SECONDS = 3.0
DRAIN_TIMEOUT_SECONDS = 300.0
MAX_ITEMS = 200
TERMINATE = text(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
    "WHERE datname = current_database() AND pid <> pg_backend_pid() "
    "AND application_name = :name"
)
Delivery = Counter[tuple[str, str]]


def kill_seconds(count: int) -> float:
    """3 s for the sample's 2 + 2 destinations, up to 20 s for the full 40 + 40."""
    return min(FULL_KILL_SECONDS, max(SAMPLE_KILL_SECONDS, count / 2))


def reports_for(seconds: float) -> int:
    """Enough reports for digests whose delivery (one message a second per destination) lasts
    about as long as the terminations: some 20 reports per message, at most MAX_ITEMS."""
    return int(min(MAX_ITEMS, 20 * (seconds + 1)))


def named(url: str, application_name: str) -> str:
    """The same database, with connections that show `application_name` in pg_stat_activity."""
    parsed = make_url(url).update_query_dict({"application_name": application_name})
    return parsed.render_as_string(hide_password=False)


@contextlib.contextmanager
def unretrieved_task_errors() -> Iterator[list[str]]:
    """What the event loop reports about tasks whose exception nobody retrieved."""
    loop = asyncio.get_running_loop()
    seen: list[str] = []
    previous = loop.get_exception_handler()

    def handler(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        seen.append(f"{context.get('message')}: {context.get('exception')!r}")

    loop.set_exception_handler(handler)
    try:
        yield seen
    finally:
        gc.collect()  # a task is reported when it is collected
        loop.set_exception_handler(previous)


async def terminate_backends(admin: AsyncEngine, name: str, seconds: float) -> int:
    """Terminate the deliverer's backends every KILL_EVERY_SECONDS for `seconds`; how many."""
    killed = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        async with admin.connect() as conn:
            killed += len((await conn.execute(TERMINATE, {"name": name})).all())
            await conn.commit()
        await asyncio.sleep(KILL_EVERY_SECONDS)
    return killed


async def drained(admin: AsyncEngine) -> None:
    deadline = time.monotonic() + DRAIN_TIMEOUT_SECONDS
    while await unfinished_count(admin):
        assert time.monotonic() < deadline, "the outbox did not drain"
        await asyncio.sleep(0.2)


async def expected_deliveries(engine: AsyncEngine) -> Delivery:
    query = select(destinations.c.target, PAYLOAD).join(
        destinations, destinations.c.id == outbox.c.destination_id
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    return Counter((str(r.target), str(r.payload["text"])) for r in rows)


@contextlib.asynccontextmanager
async def fakes(
    targets: list[str], chats: list[str]
) -> AsyncIterator[tuple[FakeSlack, FakeTelegram]]:
    async with FakeSlack() as slack, FakeTelegram() as telegram:
        for target in targets:
            slack.add_channel(target)
        for chat in chats:
            telegram.add_chat(int(chat))
        yield slack, telegram


def received(slack: FakeSlack, telegram: FakeTelegram) -> Delivery:
    got: Delivery = Counter(
        (m.channel, m.text or "") for m in slack.posted if m.method == "chat.postMessage"
    )
    got.update((str(m.chat_id), m.text) for m in telegram.sent)
    return got


@pytest.mark.parametrize("count", counts(2, 40))
async def test_dropped_connections_neither_lose_nor_duplicate(
    count: int, postgres_database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    name = f"prdigest-blip-{uuid.uuid4().hex[:8]}"
    admin = create_engine(postgres_database_url)
    engine = create_engine(named(postgres_database_url, name))
    caplog.set_level(logging.WARNING, logger="prdigest.delivery")
    try:
        await migrate(admin)
        store = ReportStore(admin)
        await add_reports(store, range(1, reports_for(kill_seconds(count)) + 1))
        channels = [
            channel(f"s{n}", f"C0BLIP{n}", platform="slack", max_items=MAX_ITEMS)
            for n in range(count)
        ]
        chats = [
            channel(f"t{n}", str(800 + n), platform="telegram", max_items=MAX_ITEMS)
            for n in range(count)
        ]
        dests = await setup_destinations(admin, *channels, *chats)
        now = datetime.now(UTC)
        for dest in dests:
            await plan_digest(admin, dest, now, Renderer(), now)
        expected = await expected_deliveries(admin)
        started = time.monotonic()
        async with fakes([c.target for c in channels], [c.target for c in chats]) as (
            slack,
            telegram,
        ):
            senders: dict[Platform, Sender] = {
                Platform.SLACK: SlackSender(slack.bot_token, slack.api_url),
                Platform.TELEGRAM: TelegramSender(telegram.token, telegram.url),
            }
            with unretrieved_task_errors() as unretrieved:
                deliverer = Deliverer(engine, senders, "blip")
                running = asyncio.create_task(deliverer.run_forever())
                killed = await terminate_backends(admin, name, kill_seconds(count))
                await drained(admin)
                deliverer.stop()
                await running
                del running, deliverer
            got = received(slack, telegram)
    finally:
        await engine.dispose()
        await admin.dispose()
    lost = sum((expected - got).values())
    duplicates = sum((got - expected).values())
    retried = sum(1 for r in caplog.records if r.getMessage() == "delivery.record_retry")
    summary = report_line(
        "blip",
        destinations=len(dests),
        messages=sum(expected.values()),
        kill_seconds=kill_seconds(count),
        backends_terminated=killed,
        records_retried=retried,
        lost=lost,
        duplicates=duplicates,
        never_retrieved=len(unretrieved),
        seconds=round(time.monotonic() - started, 1),
    )
    print(summary)
    assert killed > 0, summary
    assert lost == 0, summary
    assert duplicates == 0, summary
    assert not unretrieved, f"{summary}; {unretrieved[:3]}"
