"""`subscribe test`: the replay's counts on a known set of reports, for daily, weekly and `now`.

The store holds 12 reports in the last 30 days (6 tagged `breaking`, one of them never merged,
so its time is when the store first saw it), and two outside the window. `now` is Tuesday
2026-06-30 12:00 UTC; fire times are in UTC so the expected digests can be read off a calendar.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from bot.chat.replay import Replay, replay
from bot.core.models import Locale, Platform
from bot.core.query import parse
from bot.core.render.renderer import Renderer
from bot.core.reports.model import Report
from bot.core.store.reports import ReportStore
from bot.core.timing.cadence import Cadence, parse_cadence
from bot.core.timing.cron import next_fire
from tests.kits.delivery import newest_seq_of

NOW = datetime(2026, 6, 30, 12, 0, tzinfo=UTC)
ZONE = "UTC"
BREAKING = "tag:breaking"


def at(month: int, day: int, hour: int = 0) -> datetime:
    return datetime(2026, month, day, hour, 0, tzinfo=UTC)


def pr(number: int, merged: datetime | None, *tags: str, summary: str = "") -> Report:
    return Report(
        repo="acme/app",
        number=number,
        title=f"change {number}",
        merged_at=merged,
        summary=summary or f"one-liner {number}",
        tags=list(tags),
    )


# (number, merged_at, tags): `breaking` ones are 1-6, 6 unmerged (seen at 06-30 10:00)
WINDOW = [
    (1, at(6, 1, 8), ("breaking",)),  # Mon
    (2, at(6, 1, 10), ("breaking", "api")),  # Mon, after 09:00
    (3, at(6, 10, 15), ("breaking",)),  # Wed
    (4, at(6, 20, 11), ("breaking",)),  # Sat
    (5, at(6, 29, 20), ("breaking", "db")),  # Mon evening
    (7, at(6, 2), ("docs",)),
    (8, at(6, 5), ("ci",)),
    (9, at(6, 9), ("api",)),
    (10, at(6, 14), ("docs",)),
    (11, at(6, 18), ("perf",)),
    (12, at(6, 25), ("fix",)),
]
OLD = [(20, at(5, 20), ("breaking",)), (21, at(5, 31, 12), ("breaking",))]  # 21: the edge
UNMERGED_SEEN = at(6, 30, 10)


def clock_at(moment: datetime) -> Callable[[], datetime]:
    return lambda: moment


async def fill(store: ReportStore) -> None:
    store.clock = clock_at(NOW)
    await store.upsert_many([(pr(n, m, *t), "") for n, m, t in WINDOW + OLD])
    store.clock = clock_at(UNMERGED_SEEN)
    await store.upsert(pr(6, None, "breaking"))


def cadence(text: str) -> Cadence:
    return parse_cadence(text, next_fire=next_fire, now=NOW)


async def run(
    store: ReportStore, text: str, query: str = BREAKING, platform: Platform = Platform.SLACK
) -> Replay:
    return await replay(
        store,
        parse(query),
        cadence(text),
        now=NOW,
        tz=ZONE,
        renderer=Renderer(),
        platform=platform,
        locale=Locale.EN,
    )


async def test_daily_replay_counts_one_digest_per_day_with_matches(store: ReportStore) -> None:
    await fill(store)
    result = await run(store, "daily 09:00")
    # 06-01 09:00 (1), 06-02 (2), 06-11 (3), 06-21 (4), 06-30 09:00 (5); 6 waits for 07-01
    assert (result.matched, result.digests, result.messages) == (6, 5, 5)
    assert result.messages_per_week == pytest.approx(5 * 7 / 30)


async def test_weekly_replay_gathers_a_weeks_matches_in_one_digest(store: ReportStore) -> None:
    await fill(store)
    result = await run(store, "weekly fri 17:00")
    # Fri 06-05 (1, 2), 06-12 (3), 06-26 (4); 5 and 6 wait for Fri 07-03
    assert (result.matched, result.digests, result.messages) == (6, 3, 3)
    assert result.messages_per_week == pytest.approx(3 * 7 / 30)


async def test_now_replay_posts_every_match_alone(store: ReportStore) -> None:
    await fill(store)
    result = await run(store, "now")
    assert (result.matched, result.digests, result.messages) == (6, 6, 6)
    assert result.messages_per_week == pytest.approx(6 * 7 / 30)


async def test_the_five_newest_matches_are_listed_newest_first(store: ReportStore) -> None:
    await fill(store)
    result = await run(store, "daily 09:00")
    assert [(m.repo, m.number, m.title) for m in result.newest] == [
        ("acme/app", 6, "change 6"),
        ("acme/app", 5, "change 5"),
        ("acme/app", 4, "change 4"),
        ("acme/app", 3, "change 3"),
        ("acme/app", 2, "change 2"),
    ]
    assert result.newest[0].at == UNMERGED_SEEN


async def test_a_time_term_reads_when_an_unmerged_report_was_first_seen(
    store: ReportStore,
) -> None:
    await fill(store)
    result = await run(store, "now", query="tag:breaking since:3d")
    assert [m.number for m in result.newest] == [6, 5]


async def test_a_query_nothing_matches_replays_to_nothing(store: ReportStore) -> None:
    await fill(store)
    result = await run(store, "daily 09:00", query="tag:nosuchtag")
    assert (result.matched, result.digests, result.messages, result.newest) == (0, 0, 0, ())
    assert result.messages_per_week == 0


async def test_a_long_digest_counts_every_message_it_is_split_into(store: ReportStore) -> None:
    store.clock = clock_at(NOW)
    long_text = "a long one-liner that fills the message " * 20
    many = [(pr(100 + n, at(6, 3, 1), "bulk", summary=long_text), "") for n in range(30)]
    await store.upsert_many(many)
    result = await run(store, "weekly fri 17:00", query="tag:bulk", platform=Platform.TELEGRAM)
    assert (result.matched, result.digests) == (30, 1)
    assert result.messages > 1


async def test_a_replay_changes_nothing_in_the_store(store: ReportStore) -> None:
    await fill(store)
    before = (await store.count(), await newest_seq_of(store))
    await run(store, "daily 09:00")
    await run(store, "now")
    assert (await store.count(), await newest_seq_of(store)) == before
