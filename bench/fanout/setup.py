"""The fan-out benchmark's store: 10,000 Telegram chat subscriptions and their queued digests.

Subscriptions are written as `/subscribe` leaves them (origin "chat", random tag filters, both
locales, 30% groups), before 500 new reports arrive; then every chat's digest is planned into
the outbox, so the delivery clock starts with the whole fan-out queued.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select

from bench.render import REPOS, TAGS, make_reports
from bot.core.delivery.outbox import Due, TickPlan, plan_runs
from bot.core.digest.select import DigestFilter
from bot.core.models import Layout, Locale, Origin, Platform
from bot.core.render.renderer import Renderer
from bot.core.store.editions import PAYLOAD
from bot.core.store.reports import ReportStore, WindowCache
from bot.core.store.sql.db import create_engine, migrate, write_transaction
from bot.core.store.sql.tables import destinations, outbox, subscriptions
from bot.core.store.subscriptions import SubscriptionStore, filter_to_json

GROUP_SHARE = 0.3  # the rest are private chats
NEW_REPORTS = 500


@dataclass(frozen=True)
class Message:
    chat_id: int
    text: str
    payload: dict[str, Any]


def chat_ids(count: int, rng: random.Random) -> list[int]:
    groups = {i for i in range(count) if rng.random() < GROUP_SHARE}
    return [-1_001_000_000_000 - i if i in groups else 1_000_000 + i for i in range(count)]


def random_filter(rng: random.Random) -> DigestFilter:
    return DigestFilter(
        repos=(rng.choice(REPOS),) if rng.random() < 0.3 else (),
        tags=tuple(rng.sample(TAGS, rng.randint(1, 3))),
        exclude_tags=tuple(rng.sample(TAGS, rng.randint(0, 1))),
        max_items=rng.choice([10, 20, 30]),
    )


async def subscribe(
    engine: Any,
    chats: Sequence[int | str],
    rng: random.Random,
    platform: Platform = Platform.TELEGRAM,
) -> None:
    """One chat subscription per chat (origin "chat"), as `/subscribe` leaves it."""
    now = datetime.now(UTC)
    places = [
        {
            "platform": platform.value,
            "target": str(chat),
            "active": True,
            "consecutive_failures": 0,
            "created_at": now,
            "updated_at": now,
        }
        for chat in chats
    ]
    async with write_transaction(engine) as conn:
        await conn.execute(destinations.insert(), places)
        ids = (await conn.execute(select(destinations.c.id).order_by(destinations.c.id))).scalars()
        rows = [
            {
                "destination_id": int(dest_id),
                "number": 1,
                "name": "chat",
                "origin": Origin.CHAT.value,
                "filters": filter_to_json(random_filter(rng)),
                "schedule": "0 9 * * *",
                "cadence": "daily 09:00",
                "timezone": "UTC",
                "locale": rng.choice(list(Locale)).value,
                "layout": Layout.FLAT.value,
                "owner": None,
                "post_empty": False,
                "locked": False,
                "watermark": 0,
                "created_at": now,
                "updated_at": now,
            }
            for dest_id in ids
        ]
        await conn.execute(subscriptions.insert(), rows)


async def plan_all(engine: Any, renderer: Renderer, scheduled_for: datetime) -> float:
    """Queue every destination's digest as one scheduler tick does (`plan_runs` with one
    TickPlan: batches of destinations, each audience rendered once); seconds in all."""
    subs = await SubscriptionStore(engine).all()
    due = {sub.destination_id: [Due(sub, scheduled_for)] for sub in subs}
    started = time.perf_counter()
    await plan_runs(engine, due, TickPlan(renderer, scheduled_for, WindowCache()))
    return time.perf_counter() - started


async def queued(engine: Any) -> list[tuple[str, dict[str, Any]]]:
    """Every queued message as (its destination's target, its payload), in outbox order."""
    query = (
        outbox.select()
        .with_only_columns(destinations.c.target, PAYLOAD)
        .join_from(outbox, destinations, destinations.c.id == outbox.c.destination_id)
        .order_by(outbox.c.id)
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    return [(str(row.target), dict(row.payload)) for row in rows]


async def queued_messages(engine: Any) -> list[Message]:
    return [Message(int(target), str(p["text"]), p) for target, p in await queued(engine)]


async def prepare(
    folder: Path, chats: int, seed: int = 7422, url: str | None = None
) -> tuple[Any, list[Message], dict[str, Any]]:
    """A store (SQLite in `folder`, or `url`) with `chats` subscriptions and 500 new reports,
    every digest queued."""
    rng = random.Random(seed)
    engine = create_engine(url or f"sqlite:///{folder / 'fanout.db'}")
    await migrate(engine)
    await subscribe(engine, chat_ids(chats, rng), rng)
    items = make_reports(NEW_REPORTS, rng)
    await ReportStore(engine).upsert_many([(item.report, "bench") for item in items])
    scheduled_for = datetime.now(UTC).replace(microsecond=0)
    plan_seconds = await plan_all(engine, Renderer(), scheduled_for)
    notes = {
        "plan_seconds": round(plan_seconds, 1),
        "plan_digest_ms": round(plan_seconds * 1000 / max(1, chats), 2),
    }
    return engine, await queued_messages(engine), notes
