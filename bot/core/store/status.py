"""Per-subscription delivery status: last digest, its destination's queued and failed messages,
why."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.models import Origin
from bot.core.store.runs import last_run
from bot.core.store.sql.tables import outbox
from bot.core.store.statuses import RowStatus, RunStatus
from bot.core.store.subscriptions import Subscription, SubscriptionStore


@dataclass
class DestinationStatus:
    destination: str
    platform: str
    target: str
    origin: Origin
    number: int  # what the chat calls it (`unsubscribe 2`)
    query: str
    cadence: str
    owner: str | None  # None: the chat's; else the person's, in a DM or private chat
    tags: list[str]
    exclude_tags: list[str]
    repos: list[str]
    schedule: str
    timezone: str
    active: bool
    deactivated_reason: str | None
    last_digest: str | None
    last_digest_status: RunStatus | None
    pending: int
    failed: int
    last_error: str | None
    watermark: int
    plan_error: str | None = None  # the digest failed to plan or render here, why
    plan_retry_at: str | None = None  # when it is tried again


async def _counts(engine: AsyncEngine, dest_id: int) -> tuple[int, int, str | None]:
    async with engine.connect() as conn:
        found = await conn.execute(
            select(outbox.c.status, func.count())
            .where(outbox.c.destination_id == dest_id)
            .group_by(outbox.c.status)
        )
        rows = {RowStatus(status): int(count) for status, count in found}
        error = (
            await conn.execute(
                select(outbox.c.last_error)
                .where(outbox.c.destination_id == dest_id, outbox.c.last_error.is_not(None))
                .order_by(outbox.c.id.desc())
                .limit(1)
            )
        ).scalar()
    pending = rows.get(RowStatus.PENDING, 0) + rows.get(RowStatus.SENDING, 0)
    return pending, rows.get(RowStatus.FAILED, 0), error


async def collect(
    engine: AsyncEngine, only: list[Subscription] | None = None
) -> list[DestinationStatus]:
    result = []
    for dest in only if only is not None else await SubscriptionStore(engine).all():
        pending, failed, error = await _counts(engine, dest.destination_id)
        last = await last_run(engine, dest.id)
        result.append(
            DestinationStatus(
                destination=dest.label,
                platform=dest.platform.value,
                target=dest.target,
                origin=dest.origin,
                number=dest.number,
                query=dest.filter.query,
                cadence=dest.cadence,
                owner=dest.owner,
                tags=list(dest.filter.tags),
                exclude_tags=list(dest.filter.exclude_tags),
                repos=list(dest.filter.repos),
                schedule=dest.schedule,
                timezone=dest.timezone,
                active=dest.active,
                deactivated_reason=dest.deactivated_reason,
                last_digest=last.scheduled_for.isoformat() if last else None,
                last_digest_status=last.status if last else None,
                pending=pending,
                failed=failed,
                last_error=error,
                watermark=dest.watermark,
                plan_error=dest.plan_error,
                plan_retry_at=dest.plan_retry_at.isoformat() if dest.plan_retry_at else None,
            )
        )
    return result
