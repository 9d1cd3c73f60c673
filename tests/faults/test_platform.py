"""Slack and Telegram failing at random: once the faults stop, every message is delivered.

The delivery layer as the service runs it (outbox, `Deliverer`, the real `SlackSender` and
`TelegramSender`) delivers digests to Slack channels and Telegram chats on the strict loopback
fakes, which answer a random script of faults per destination first: HTTP 500/502/503, 429 with
a good, odd or missing Retry-After, a connection reset after the message was accepted, and a
stall past the client's timeout (1 s here, 15 s in production). Time runs on a fake clock
shared by the Deliverer, Telegram's chat pacer and the Telegram fake's flood limits, so backoffs
and Retry-After waits take no real time. Expected: nothing lost; on Slack a reset after it took the
post never repeats it (a row whose send may have gone through is looked for in the channel
first), and a stall repeats it only if Slack is still handling the stalled request when the bot
looks; on Telegram, which has no history to look in, a message twice only where it had accepted
it before the connection failed (a reset or a stall): at most one extra copy per such fault.

Sample: 2 Slack + 2 Telegram destinations in `SLOW=1 make test` (CI); `pytest -m faults`: 40 + 40.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.adapters.slack.sender import SlackSender
from bot.adapters.telegram.pace import ChatPacer
from bot.adapters.telegram.sender import TelegramSender
from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.ledger import unfinished_count
from bot.core.delivery.outbox import plan_digest
from bot.core.delivery.port import Sender
from bot.core.models import Platform
from bot.core.render.renderer import Renderer
from bot.core.store.editions import PAYLOAD
from bot.core.store.reports import ReportStore
from bot.core.store.sql.tables import destinations, outbox
from bot.core.store.subscriptions import Subscription
from tests.fakes.slack import api as slack_api
from tests.fakes.slack.api import FakeSlack
from tests.fakes.slack.faults import FaultKind
from tests.fakes.telegram import api as telegram_api
from tests.fakes.telegram.api import FakeTelegram
from tests.kits.delivery import FakeClock, add_reports, channel, setup_destinations
from tests.kits.faults import counts, report_line

pytestmark = pytest.mark.slow

CLIENT_TIMEOUT = 1.0
STALL_SECONDS = 1.5
STEP_SECONDS = 5.0
MAX_STEPS = 2_000
MAX_FAULTS = 5
RETRY_AFTER_HEADERS = ["1", "7", "7.5", "abc", "", None]
Delivery = Counter[tuple[str, str]]


def slack_faults(rng: random.Random) -> tuple[list[slack_api.Fault], int]:
    """A random script for one channel; how many of its faults leave an accepted message."""
    choices: list[tuple[Callable[[], slack_api.Fault], bool]] = [
        (lambda: slack_api.Fault.server_error(rng.choice([500, 502, 503])), False),
        (lambda: slack_api.Fault.rate_limited(rng.choice(RETRY_AFTER_HEADERS)), False),
        (slack_api.Fault.reset_after_accept, True),
        (lambda: slack_api.Fault.delay(STALL_SECONDS), True),
    ]
    picked = [rng.choice(choices) for _ in range(rng.randint(1, MAX_FAULTS))]
    return [make() for make, _ in picked], sum(accepted for _, accepted in picked)


def telegram_faults(rng: random.Random) -> tuple[list[telegram_api.Fault], int]:
    choices: list[tuple[Callable[[], telegram_api.Fault], bool]] = [
        (lambda: telegram_api.Fault.server_error(rng.choice([500, 502])), False),
        (lambda: telegram_api.Fault.retry_after(rng.randint(1, 40)), False),
        (telegram_api.Fault.reset_after_accept, True),
        (lambda: telegram_api.Fault.stall(STALL_SECONDS), True),
    ]
    picked = [rng.choice(choices) for _ in range(rng.randint(1, MAX_FAULTS))]
    return [make() for make, _ in picked], sum(accepted for _, accepted in picked)


async def plan_all(engine: AsyncEngine, dests: list[Subscription], clock: FakeClock) -> None:
    renderer = Renderer()
    for dest in dests:
        run = await plan_digest(engine, dest, clock(), renderer, clock())
        assert run.messages >= 2, "each digest should be several messages"


async def expected_deliveries(store: ReportStore) -> Delivery:
    query = select(destinations.c.target, PAYLOAD).join(
        destinations, destinations.c.id == outbox.c.destination_id
    )
    async with store.engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    return Counter((str(r.target), str(r.payload["text"])) for r in rows)


def received(slack: FakeSlack, telegram: FakeTelegram) -> Delivery:
    got: Delivery = Counter(
        (m.channel, m.text or "") for m in slack.posted if m.method == "chat.postMessage"
    )
    got.update((str(m.chat_id), m.text) for m in telegram.sent)
    return got


def fast_senders(
    slack: FakeSlack, telegram: FakeTelegram, clock: FakeClock
) -> dict[Platform, Sender]:
    """The production senders, with a 1 s client timeout and the fake clock for pacing."""
    slack_sender = SlackSender(slack.bot_token, slack.api_url)
    slack_sender.client.timeout = int(CLIENT_TIMEOUT)
    pacer = ChatPacer(clock=lambda: clock().timestamp())
    telegram_sender = TelegramSender(telegram.token, telegram.url, pacer=pacer)
    telegram_sender.client = httpx.AsyncClient(timeout=CLIENT_TIMEOUT)
    return {Platform.SLACK: slack_sender, Platform.TELEGRAM: telegram_sender}


async def deliver_until_done(deliverer: Deliverer, store: ReportStore, clock: FakeClock) -> int:
    """Run the Deliverer, moving the fake clock on when nothing is due; steps taken."""
    for step in range(MAX_STEPS):
        while await deliverer.run_once():
            pass
        if not await unfinished_count(store.engine):
            return step
        clock.advance(STEP_SECONDS)
    raise AssertionError("the outbox did not drain")


@pytest.mark.parametrize("count", counts(2, 40))
async def test_every_message_arrives_once_the_platform_faults_clear(
    count: int, store: ReportStore
) -> None:
    rng = random.Random(f"platform-{count}")
    clock = FakeClock(datetime(2026, 9, 1, 9, 0, tzinfo=UTC))
    await add_reports(store, range(1, 41))
    channels = [
        channel(f"s{n}", f"C0FAULT{n}", platform="slack", max_items=200) for n in range(count)
    ]
    chats = [
        channel(f"t{n}", str(700 + n), platform="telegram", max_items=200) for n in range(count)
    ]
    dests = await setup_destinations(store.engine, *channels, *chats)
    await plan_all(store.engine, dests, clock)
    expected = await expected_deliveries(store)
    ambiguous = 0  # Telegram's: Slack's are looked for
    slack_ambiguous = 0
    slack_stalls = 0  # requests Slack is still handling when the bot has given up and looks
    async with (
        FakeSlack(clock=lambda: clock().timestamp()) as slack,
        FakeTelegram(clock=lambda: clock().timestamp()) as telegram,
    ):
        for ch in channels:
            slack.add_channel(ch.target)
            faults, accepted = slack_faults(rng)
            slack.script("chat.postMessage", *faults, channel=ch.target)
            slack_ambiguous += accepted
            slack_stalls += len([fault for fault in faults if fault.kind is FaultKind.DELAY])
        for chat in chats:
            telegram.add_chat(int(chat.target))
            tg_faults, accepted = telegram_faults(rng)
            telegram.script(int(chat.target), *tg_faults)
            ambiguous += accepted
        deliverer = Deliverer(store.engine, fast_senders(slack, telegram, clock), "faults", clock)
        steps = await deliver_until_done(deliverer, store, clock)
        got = received(slack, telegram)
        # A post Slack took before the connection failed is found, not posted again: it stands
        # for the success the script expected after it, so at most that many faults go unused.
        assert slack.pending_faults() <= slack_ambiguous
        flood = telegram.flood_429s
    lost = sum((expected - got).values())
    duplicates = sum((got - expected).values())
    slack_duplicates = sum(
        n for (target, _), n in (got - expected).items() if target.startswith("C0FAULT")
    )
    summary = report_line(
        "platform faults",
        destinations=len(dests),
        messages=sum(expected.values()),
        accepted_then_failed=(
            f"{slack_ambiguous} Slack ({slack_stalls} stalls) + {ambiguous} Telegram"
        ),
        lost=lost,
        duplicates=f"{slack_duplicates} Slack + {duplicates - slack_duplicates} Telegram",
        flood_429s=flood,
        simulated_seconds=steps * STEP_SECONDS,
    )
    print(summary)
    assert lost == 0, summary
    assert set(got) <= set(expected), summary
    # A reset after Slack took the post is found by the history check: never twice. A stall is
    # still being handled when the bot looks (the fake holds it 1.5 s of real time while the
    # bot's clock jumps ahead): found only if it landed by then, else posted twice, once at most.
    assert slack_duplicates <= slack_stalls, summary
    assert duplicates - slack_duplicates <= ambiguous, summary
    assert flood == 0, summary
