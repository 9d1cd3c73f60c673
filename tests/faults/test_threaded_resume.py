"""A threaded digest whose deliverer dies between the parent and its replies, then resumes:
one parent, every reply, each in the parent's thread (strict fake Slack).

The kill is in-process: the sender raises right after Slack accepted a message, before the
deliverer could record it, or the deliverer is dropped between two sends. Its claims stay
leased; the resumed deliverer waits them out on its clock, and finds the reply that was in
flight in its thread instead of posting it again (Slack exactly once)."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Mapping

import pytest
from sqlalchemy import select

from bot.adapters.slack.sender import SlackSender
from bot.core.delivery.deliverer import LEASE, Deliverer
from bot.core.delivery.ledger import unfinished_count
from bot.core.delivery.outbox import plan_digest
from bot.core.delivery.port import Outcome, Turn
from bot.core.models import Platform
from bot.core.render.renderer import Renderer
from bot.core.store.editions import PAYLOAD
from bot.core.store.reports import ReportStore
from tests.fakes.slack.api import FakeSlack
from tests.kits.delivery import FakeClock, add_reports, channel, run_until_idle, setup_destinations

CHANNEL = "C0RESUME"


class Killed(Exception):
    """The process died here."""


class DyingSender(SlackSender):
    """Sends for real; after `die_after` accepted messages, dies before the result is recorded."""

    def __init__(self, fake: FakeSlack, die_after: int) -> None:
        super().__init__(fake.bot_token, fake.api_url)
        self.left = die_after

    async def send(self, target: str, payload: Mapping[str, object], turn: Turn) -> Outcome:
        outcome = await super().send(target, payload, turn)
        self.left -= 1
        if self.left == 0:
            raise Killed
        return outcome


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        server.add_channel(CHANNEL)
        yield server


@pytest.mark.parametrize("kill", ["between_parent_and_replies", "inside_the_first_reply"])
async def test_a_killed_threaded_digest_resumes_with_one_parent_and_every_reply_in_its_thread(
    store: ReportStore, fake: FakeSlack, kill: str
) -> None:
    clock = FakeClock()
    [sub] = await setup_destinations(
        store.engine, channel("team", CHANNEL, platform="slack", layout="threaded")
    )
    for n, tag in enumerate(["rollout", "sglang", "trainer", "ci"]):
        await add_reports(store, [10 * n + 1, 10 * n + 2], tags=[tag])
    await plan_digest(store.engine, sub, clock(), Renderer(), clock())
    async with store.engine.connect() as conn:
        planned = [str(p["text"]) for (p,) in await conn.execute(select(PAYLOAD))]
    assert len(planned) == 5

    dies_after = 2 if kill == "inside_the_first_reply" else 1_000
    first = Deliverer(store.engine, {Platform.SLACK: DyingSender(fake, dies_after)}, "a", clock)
    assert await first.run_once() == 1  # the parent, sent and recorded
    if kill == "inside_the_first_reply":
        clock.advance(1)  # Slack's pace: one message a second per channel
        with pytest.raises(Killed):
            await first.run_once()
    clock.advance(LEASE.total_seconds() + 1)  # a dead process's claims are free again
    resumed = Deliverer(
        store.engine, {Platform.SLACK: SlackSender(fake.bot_token, fake.api_url)}, "b", clock
    )
    await run_until_idle(resumed, clock, 30)

    assert await unfinished_count(store.engine) == 0
    posted = [m for m in fake.posted if m.method == "chat.postMessage"]
    parents = [m for m in posted if m.thread_ts is None]
    assert len(parents) == 1, "a resumed run never re-posts its parent"
    replies = [m for m in posted if m.thread_ts is not None]
    assert {m.thread_ts for m in replies} == {parents[0].ts}
    assert all(m.params.get("reply_broadcast") in (False, "false") for m in replies)
    received = Counter(m.text for m in posted)
    assert set(received) == set(planned), "every reply arrived"
    repeated = sum(received.values()) - len(planned)
    # Slack exactly once: the reply in flight at the kill is found in its thread (its key in the
    # message metadata), recorded, and not posted again.
    assert repeated == 0, "nothing twice on Slack"
