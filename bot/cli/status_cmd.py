"""`prdigest status`: per destination, the last digest, what is queued or failed, and why."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.cli.common import Command
from bot.context import open_context
from bot.core.destinations import DestinationStore
from bot.core.tables import digest_runs, outbox


@dataclass
class DestinationStatus:
    destination: str
    platform: str
    target: str
    active: bool
    deactivated_reason: str | None
    last_digest: str | None
    last_digest_status: str | None
    pending: int
    failed: int
    last_error: str | None
    watermark: int


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=["text", "json"], default="text", dest="fmt")


async def _counts(engine: AsyncEngine, dest_id: int) -> tuple[int, int, str | None]:
    async with engine.connect() as conn:
        rows: dict[str, int] = dict(
            (
                await conn.execute(
                    select(outbox.c.status, func.count())
                    .where(outbox.c.destination_id == dest_id)
                    .group_by(outbox.c.status)
                )
            ).all()
        )
        error = (
            await conn.execute(
                select(outbox.c.last_error)
                .where(outbox.c.destination_id == dest_id, outbox.c.last_error.is_not(None))
                .order_by(outbox.c.id.desc())
                .limit(1)
            )
        ).scalar()
    pending = int(rows.get("pending", 0)) + int(rows.get("sending", 0))
    return pending, int(rows.get("failed", 0)), error


async def _last_run(engine: AsyncEngine, dest_id: int) -> tuple[datetime | None, str | None]:
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                select(digest_runs.c.scheduled_for, digest_runs.c.status)
                .where(digest_runs.c.destination_id == dest_id)
                .order_by(digest_runs.c.scheduled_for.desc())
                .limit(1)
            )
        ).first()
    return (row.scheduled_for, row.status) if row else (None, None)


async def collect(engine: AsyncEngine) -> list[DestinationStatus]:
    result = []
    for dest in await DestinationStore(engine).all():
        pending, failed, error = await _counts(engine, dest.id)
        when, status = await _last_run(engine, dest.id)
        result.append(
            DestinationStatus(
                destination=dest.label,
                platform=dest.platform.value,
                target=dest.target,
                active=dest.active,
                deactivated_reason=dest.deactivated_reason,
                last_digest=when.isoformat() if when else None,
                last_digest_status=status,
                pending=pending,
                failed=failed,
                last_error=error,
                watermark=dest.watermark,
            )
        )
    return result


def _text(item: DestinationStatus) -> str:
    state = "active" if item.active else f"DEACTIVATED ({item.deactivated_reason})"
    last = f"{item.last_digest} {item.last_digest_status}" if item.last_digest else "never"
    line = (
        f"{item.destination:24} {item.platform}:{item.target}  {state}\n"
        f"    last digest: {last}; pending {item.pending}, failed {item.failed}"
    )
    if item.last_error and (item.pending or item.failed):
        line += f"\n    last error: {item.last_error}"
    return line


async def _handle(args: argparse.Namespace) -> int:
    async with open_context() as ctx:
        await DestinationStore(ctx.engine).sync_config(ctx.config)
        items = await collect(ctx.engine)
    if args.fmt == "json":
        print(json.dumps([asdict(i) for i in items], ensure_ascii=False, indent=2))
    elif not items:
        print("no destinations: add channels to the config or subscribe a chat")
    else:
        print("\n".join(_text(i) for i in items))
    return 0


COMMAND = Command(
    "status", "per destination: last digest, queued and failed messages", _configure, _handle
)
