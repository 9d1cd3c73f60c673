"""The planner's reading state: unread must-read PRs roll over, snoozed and muted ones leave,
a run keeps what "+N more" holds, and a sent message knows which PRs it shows.

Runs on SQLite, and on PostgreSQL too when BOT_TEST_DATABASE_URL is set (the `store` fixture).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.outbox import plan_digest
from bot.core.delivery.reading import ReadingPolicy
from bot.core.digest.select import Digest
from bot.core.models import Platform
from bot.core.reports.model import RecommendationLevel, Report
from bot.core.store.prune import prune
from bot.core.store.reading import Mark, MarkKind, keys_in_message, put_mark, take_page
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import Subscription
from bot.settings import Channel
from tests.kits.delivery import (
    FakeClock,
    ScriptedSender,
    channel,
    report,
    run_until_idle,
    setup_destinations,
)
from tests.kits.render import RecordingRenderer

REPO = "verl-project/verl"
DAY = timedelta(days=1)


def must_read(number: int, **kw: Any) -> Report:
    return report(number, **kw).model_copy(
        update={"recommendation_level": RecommendationLevel.MUST_READ}
    )


class Desk:
    """One console destination planned day after day, its messages delivered at once."""

    def __init__(self, store: ReportStore, sub: Subscription, policy: ReadingPolicy) -> None:
        self.store, self.sub, self.policy = store, sub, policy
        self.clock = FakeClock()
        self.sender = ScriptedSender(self.clock)
        self.renderer = RecordingRenderer()
        self.deliverer = Deliverer(store.engine, {Platform.CONSOLE: self.sender}, "w", self.clock)

    async def add(self, *reports: Report) -> None:
        await self.store.upsert_many([(r, "") for r in reports])

    async def digest(self, sub: Subscription | None = None) -> Digest:
        """Plan and deliver the next digest a day after the last one."""
        self.clock.now += DAY
        now = self.clock()
        run = await plan_digest(
            self.store.engine, sub or self.sub, now, self.renderer, now, reading=self.policy
        )
        assert run.created and run.messages, "something new each day"
        await run_until_idle(self.deliverer, self.clock, 5)
        return self.renderer.last

    async def mark(self, kind: MarkKind, subject: str) -> None:
        mark = Mark(kind, subject, "alice", self.clock(), self.clock() + 7 * DAY)
        await put_mark(self.store.engine, self.sub.destination_id, mark)


async def _desk(store: ReportStore, unread_days: int = 7, **extra: object) -> Desk:
    [sub] = await setup_destinations(store.engine, channel("team", "T", **extra))
    return Desk(store, sub, ReadingPolicy(unread_days))


def _numbers(entries: tuple[Any, ...]) -> list[int]:
    return [entry.report.number for entry in entries]


def _shown(digest: Digest) -> list[int]:
    return [e.report.number for group in digest.groups for e in group.entries]


async def test_unread_must_reads_roll_into_the_next_digest_until_marked_read(
    store: ReportStore,
) -> None:
    desk = await _desk(store)
    await desk.add(must_read(1), must_read(2), report(3))
    first = await desk.digest()
    assert sorted(_shown(first)) == [1, 2, 3] and first.unread == ()

    await desk.mark(MarkKind.READ, f"{REPO}#1")
    await desk.add(report(4))
    second = await desk.digest()
    assert _shown(second) == [4]
    assert _numbers(second.unread) == [2], "#1 was read; #3 is not a must-read"

    await desk.mark(MarkKind.READ, f"{REPO}#2")
    await desk.add(report(5))
    third = await desk.digest()
    assert third.unread == () and third.unread_dropped == 0


async def test_unread_drops_after_unread_days_and_the_digest_says_so_once(
    store: ReportStore,
) -> None:
    desk = await _desk(store, unread_days=2)
    await desk.add(must_read(1))
    await desk.digest()  # day 1: shown
    for number, unread, dropped in ((2, [1], 0), (3, [], 1), (4, [], 0)):
        await desk.add(report(number))
        digest = await desk.digest()
        assert (_numbers(digest.unread), digest.unread_dropped) == (unread, dropped), number


async def test_a_pr_new_again_in_this_digest_is_not_repeated_as_unread(
    store: ReportStore,
) -> None:
    desk = await _desk(store)
    await desk.add(must_read(1))
    await desk.digest()
    await desk.add(must_read(1, summary="re-ingested with new content"))
    again = await desk.digest()
    assert _shown(again) == [1] and again.unread == ()


async def test_snoozed_prs_and_muted_tags_leave_this_destinations_digests(
    store: ReportStore,
) -> None:
    desk = await _desk(store)
    await desk.mark(MarkKind.SNOOZE, f"{REPO}#1")
    await desk.mark(MarkKind.MUTE, "ci")
    await desk.add(report(1), report(2, tags=["ci"]), report(3, tags=["CI", "x"]), report(4))
    digest = await desk.digest()
    assert _shown(digest) == [4]


async def test_a_snooze_ends_and_the_pr_comes_back_as_unread(store: ReportStore) -> None:
    desk = await _desk(store, unread_days=20)
    await desk.add(must_read(1))
    await desk.digest()
    await desk.mark(MarkKind.SNOOZE, f"{REPO}#1")  # for 7 days
    await desk.add(report(2))
    assert (await desk.digest()).unread == ()
    desk.clock.now += 6 * DAY
    await desk.add(report(3))
    assert _numbers((await desk.digest()).unread) == [1]


async def test_more_keeps_the_entries_past_max_items_for_pages(store: ReportStore) -> None:
    desk = await _desk(store, max_items=2)
    await desk.add(*(report(n) for n in range(1, 6)))
    digest = await desk.digest()
    options = desk.renderer.seen[-1][1]
    assert digest.more == 3 and options.more_key.isdigit()
    run_id = int(options.more_key)
    engine, dest = store.engine, desk.sub.destination_id
    page = await take_page(engine, dest, run_id, desk.clock())
    assert page is not None and len(page.items) == 2 and page.left == 1
    last = await take_page(engine, dest, None, desk.clock())
    assert last is not None and len(last.items) == 1 and last.left == 0
    shown = {item.report.number for item, _ in page.items + last.items}
    assert shown | set(_shown(digest)) == {1, 2, 3, 4, 5}
    assert await take_page(engine, dest, None, desk.clock()) is None


async def test_a_sent_message_knows_the_prs_it_shows(store: ReportStore) -> None:
    desk = await _desk(store)
    await desk.add(must_read(7), report(8))
    await desk.digest()
    sent_id = "m1"  # the ScriptedSender's id for the first message
    keys = await keys_in_message(store.engine, Platform.CONSOLE, "T", sent_id)
    assert sorted(keys) == [f"{REPO}#7", f"{REPO}#8"]
    assert await keys_in_message(store.engine, Platform.CONSOLE, "T", "nope") == []


async def test_retention_forgets_ended_snoozes_and_old_read_marks(store: ReportStore) -> None:
    desk = await _desk(store)
    engine, dest, now = store.engine, desk.sub.destination_id, desk.clock()
    await put_mark(engine, dest, Mark(MarkKind.SNOOZE, f"{REPO}#1", "a", now, now + DAY))
    await put_mark(engine, dest, Mark(MarkKind.MUTE, "ci", "a", now, now + 9 * DAY))
    await put_mark(engine, dest, Mark(MarkKind.READ, f"{REPO}#2", "a", now))
    assert (await prune(engine, now + 2 * DAY)).marks == 1, "the snooze ended"
    assert (await prune(engine, now + 31 * DAY)).marks == 2


async def test_a_now_post_carries_no_unread_and_the_next_digest_still_does(
    store: ReportStore,
) -> None:
    values = {"name": "hot", "platform": "console", "target": "T", "cadence": "now"}
    daily, hot = await setup_destinations(
        store.engine, channel("team", "T"), Channel.model_validate({**values, "tags": ["hot"]})
    )
    desk = Desk(store, daily, ReadingPolicy(7))
    await desk.add(must_read(1))
    await desk.digest()
    await desk.add(report(2, tags=["hot"]))
    instant = await desk.digest(hot)
    assert _shown(instant) == [2] and instant.unread == ()
    await desk.add(report(3))
    assert _numbers((await desk.digest()).unread) == [1]
