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

from bench.render import REPOS, TAGS, make_reports
from bot.core.db import create_engine, migrate, write_transaction
from bot.core.destinations import Destination, DestinationStore, filter_to_json
from bot.core.ledger import RowStatus, RunStatus
from bot.core.outbox import plan_digest
from bot.core.render import Format, Renderer
from bot.core.select import DigestFilter, StoredReport, build_digest, select_new
from bot.core.store import ReportStore
from bot.core.tables import destinations, digest_runs, outbox
from bot.settings import Locale, Platform

GROUP_SHARE = 0.3  # the rest are private chats
NEW_REPORTS = 500
PLAN_SAMPLE = 50  # destinations planned through `plan_digest` itself, to time it


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


async def subscribe(engine: Any, chats: Sequence[int], rng: random.Random) -> None:
    """One chat subscription per chat (origin "chat"), as `/subscribe` leaves it."""
    now = datetime.now(UTC)
    rows = [
        {
            "platform": Platform.TELEGRAM.value,
            "target": str(chat),
            "name": None,
            "origin": "chat",
            "filters": filter_to_json(random_filter(rng)),
            "schedule": "0 9 * * *",
            "timezone": "UTC",
            "locale": rng.choice(list(Locale)).value,
            "post_empty": False,
            "active": True,
            "consecutive_failures": 0,
            "watermark": 0,
            "created_at": now,
            "updated_at": now,
        }
        for chat in chats
    ]
    async with write_transaction(engine) as conn:
        await conn.execute(destinations.insert(), rows)


async def queue_digest(
    conn: Any,
    dest: Destination,
    window: list[StoredReport],
    renderer: Renderer,
    scheduled_for: datetime,
) -> None:
    """What `plan_digest` writes for one destination, from a window already read."""
    digest = build_digest(select_new(window, dest.filter, 0), dest.filter, dest.label)
    day = scheduled_for.date()
    messages = (
        [] if digest.is_empty else renderer.digest(digest, Format.TELEGRAM, dest.locale, date=day)
    )
    run = digest_runs.insert().values(
        destination_id=dest.id,
        scheduled_for=scheduled_for,
        created_at=scheduled_for,
        from_seq=0,
        to_seq=window[-1].seq,
        entries=digest.total,
        messages=len(messages),
        status=(RunStatus.PENDING if messages else RunStatus.EMPTY).value,
    )
    run_id = (await conn.execute(run.returning(digest_runs.c.id))).scalar_one()
    rows = [
        {
            "run_id": run_id,
            "destination_id": dest.id,
            "part": part,
            "payload": message.payload,
            "status": RowStatus.PENDING.value,
            "attempts": 0,
            "next_attempt_at": scheduled_for,
            "created_at": scheduled_for,
        }
        for part, message in enumerate(messages)
    ]
    if rows:
        await conn.execute(outbox.insert(), rows)


async def plan_all(engine: Any, renderer: Renderer, scheduled_for: datetime) -> float:
    """Queue every destination's digest; seconds per destination for `plan_digest` itself.

    A sample goes through `plan_digest`; the rest are planned the same way (select, build,
    render, one run row and its outbox rows) from one read of the window, because
    `plan_digest` re-reads and re-validates the whole window for every destination.
    """
    dests = await DestinationStore(engine).all()
    started = time.perf_counter()
    for dest in dests[:PLAN_SAMPLE]:
        await plan_digest(engine, dest, scheduled_for, renderer, scheduled_for)
    per_destination = (time.perf_counter() - started) / max(1, min(PLAN_SAMPLE, len(dests)))
    window = await ReportStore(engine).since(0)
    async with write_transaction(engine) as conn:
        for dest in dests[PLAN_SAMPLE:]:
            await queue_digest(conn, dest, window, renderer, scheduled_for)
    return per_destination


async def queued_messages(engine: Any) -> list[Message]:
    query = (
        outbox.select()
        .with_only_columns(destinations.c.target, outbox.c.payload)
        .join_from(outbox, destinations, destinations.c.id == outbox.c.destination_id)
        .order_by(outbox.c.id)
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    return [Message(int(r.target), str(r.payload["text"]), dict(r.payload)) for r in rows]


async def prepare(
    folder: Path, chats: int, seed: int = 7422
) -> tuple[Any, list[Message], dict[str, Any]]:
    """A SQLite store with `chats` subscriptions and 500 new reports, every digest queued."""
    rng = random.Random(seed)
    engine = create_engine(f"sqlite:///{folder / 'fanout.db'}")
    await migrate(engine)
    await subscribe(engine, chat_ids(chats, rng), rng)
    items = make_reports(NEW_REPORTS, rng)
    await ReportStore(engine).upsert_many([(item.report, "bench") for item in items])
    scheduled_for = datetime.now(UTC).replace(microsecond=0)
    plan_seconds = await plan_all(engine, Renderer(), scheduled_for)
    notes = {"plan_digest_ms": round(plan_seconds * 1000, 1)}
    return engine, await queued_messages(engine), notes
