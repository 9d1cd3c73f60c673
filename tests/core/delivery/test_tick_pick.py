"""A tick's picks (TickPlan.pick) are `select_new`'s, worked out by terms.

Many subscriptions over one window, with filters of every kind (repos, tags, excluded tags,
queries with time terms), different watermarks and fire times: each part picks exactly the
reports `select_new` picks, the same objects in the same order; a new window starts over.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from bot.core.delivery.outbox import TickPlan
from bot.core.delivery.runs import Part
from bot.core.digest.select import DigestFilter, StoredReport, select_new
from bot.core.models import Layout, Locale, Origin, Platform, Verbosity
from bot.core.render.renderer import Renderer
from bot.core.reports.model import ImpactLevel, Report
from bot.core.store.subscriptions import Subscription

NOW = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
REPOS = ["verl-project/verl", "sgl-project/sglang", "vllm-project/vllm"]
TAGS = ["rollout", "sglang", "ci", "docs", "perf", "fix"]
QUERIES = ["", "权重", "impact>=medium", "since:2d", "-risk:* OR tag:ci", "repo:verl 权重"]


def _window(rng: random.Random, first: int, count: int) -> list[StoredReport]:
    return [
        StoredReport(
            Report(
                repo=rng.choice(REPOS),
                number=seq,
                title=f"PR {seq}",
                summary=rng.choice(["", "权重 sync", "cache"]),
                merged_at=NOW - timedelta(hours=rng.randint(1, 96)),
                impact_level=rng.choice([None, *ImpactLevel]),
                risk_flags=rng.sample(["FP8", "显存"], rng.randint(0, 1)),
                tags=rng.sample(TAGS, rng.randint(0, 3)),
            ),
            seq=seq,
        )
        for seq in range(first, first + count)
    ]


def _part(rng: random.Random, number: int, fire: datetime) -> Part:
    flt = DigestFilter(
        repos=tuple(rng.sample(REPOS, rng.randint(0, 2))),
        tags=tuple(rng.sample(TAGS, rng.randint(0, 2))),
        exclude_tags=tuple(rng.sample(TAGS, rng.randint(0, 1))),
        query=rng.choice(QUERIES),
    )
    sub = Subscription(
        id=number, destination_id=number, platform=Platform.TELEGRAM, target=str(number),
        number=1, name="chat", origin=Origin.CHAT, filter=flt, schedule="0 9 * * *",
        cadence="daily 09:00", timezone="UTC", locale=Locale.EN, layout=Layout.FLAT,
        verbosity=Verbosity.STANDARD, owner=None, post_empty=False, locked=False, watermark=0,
        active=True, deactivated_reason=None,
    )  # fmt: skip
    return Part(sub, fire, start=rng.choice([0, 0, 20, 45]))


def test_each_part_picks_what_select_new_picks() -> None:
    rng = random.Random(42)
    tick = TickPlan(Renderer(), NOW)
    for first in (1, 101):  # a second window: the picks and terms start over
        window = _window(rng, first, 80)
        for number in range(300):
            fire = rng.choice([NOW, NOW - timedelta(days=1)])
            part = _part(rng, number, fire)
            found = tick.pick(window, part)
            expected = select_new(window, part.sub.filter, part.start, fire)
            assert found == expected, part.sub.filter
            assert all(a is b for a, b in zip(found, expected, strict=True))
    assert tick.generation == 2


def test_the_same_filter_start_and_fire_pick_once() -> None:
    rng = random.Random(7)
    tick = TickPlan(Renderer(), NOW)
    window = _window(rng, 1, 30)
    part = _part(rng, 1, NOW)
    assert tick.pick(window, part) is tick.pick(window, Part(part.sub, NOW, part.start))
