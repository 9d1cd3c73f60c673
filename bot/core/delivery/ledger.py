"""The delivery ledger's claims: senders take the oldest unfinished message of each active
destination, under a lease, and record each result at once. A run whose messages are all final
advances the destination's watermark. Planning runs is `bot/core/delivery/outbox.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import exists, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.delivery.port import Blocked, Moved, RetryAfter, Transient
from bot.core.models import Platform
from bot.core.store.editions import PAYLOAD
from bot.core.store.sql.db import write_transaction
from bot.core.store.sql.tables import destinations, digest_runs, outbox, run_members, subscriptions
from bot.core.store.statuses import UNFINISHED, RowStatus, RunStatus


@dataclass(frozen=True, slots=True)
class Claimed:
    id: int
    run_id: int | None
    destination_id: int
    platform: Platform
    target: str
    part: int
    payload: dict[str, Any]
    attempts: int
    consecutive_failures: int
    created_at: datetime | None = None  # when the row was queued (with its id: its key)
    # An earlier attempt whose outcome is unknown began then (a kill, a dropped connection):
    # the message may be on the platform already.
    maybe_sent_since: datetime | None = None

    @property
    def key(self) -> str:
        """The row, unique across stores (its id alone could repeat in another database)."""
        stamp = f"{self.created_at.timestamp():.6f}" if self.created_at else ""
        return f"{self.id}@{stamp}"

    reply_to_part: int | None = None  # threaded: the part of the run this message replies to
    topic: str | None = None  # topics: the forum topic's key


async def advance_watermark(conn: AsyncConnection, subscription_id: int, seq: int) -> None:
    await conn.execute(
        update(subscriptions)
        .where(subscriptions.c.id == subscription_id, subscriptions.c.watermark < seq)
        .values(watermark=seq)
    )


async def advance_members(conn: AsyncConnection, run_id: int) -> None:
    """Each subscription the run served moves its watermark to where its part of it ended."""
    members = await conn.execute(
        select(run_members.c.subscription_id, run_members.c.to_seq).where(
            run_members.c.run_id == run_id
        )
    )
    for member in members.all():
        await advance_watermark(conn, int(member.subscription_id), int(member.to_seq))


def _earlier_unfinished() -> Any:
    earlier = outbox.alias("earlier")
    return exists().where(
        earlier.c.destination_id == outbox.c.destination_id,
        earlier.c.id < outbox.c.id,
        earlier.c.status.in_(UNFINISHED),
    )


def _claimable(platforms: tuple[Platform, ...], now: datetime, only_destination: int | None) -> Any:
    """The columns a claim returns, for rows of active destinations that may send now and
    whose earlier messages are all final."""
    query = (
        select(
            outbox.c.id,
            outbox.c.run_id,
            outbox.c.destination_id,
            outbox.c.part,
            PAYLOAD,
            outbox.c.attempts,
            outbox.c.created_at,
            outbox.c.unsure_since,
            outbox.c.reply_to_part,
            outbox.c.topic,
            destinations.c.platform,
            destinations.c.target,
            destinations.c.consecutive_failures,
        )
        .join(destinations, destinations.c.id == outbox.c.destination_id)
        .where(
            destinations.c.active.is_(True),
            destinations.c.platform.in_([p.value for p in platforms]),
            or_(destinations.c.next_send_at.is_(None), destinations.c.next_send_at <= now),
            ~_earlier_unfinished(),
        )
        .with_for_update(skip_locked=True, of=outbox)
    )
    if only_destination is not None:
        query = query.where(outbox.c.destination_id == only_destination)
    return query


async def claim(
    engine: AsyncEngine,
    worker: str,
    now: datetime,
    platforms: tuple[Platform, ...],
    limit: int,
    lease: timedelta,
    only_destination: int | None = None,
) -> list[Claimed]:
    """Claim due messages: the oldest unfinished one per active destination that may send now.

    Two index walks, never an OR: rows whose lease ran out (a dead sender's, few), then
    pending rows in (next_attempt_at, id) order along `ix_outbox_due`, which stops after
    `limit` matches. One OR of both made the database collect and sort every due row first
    (100 ms per claim at 19,000 queued messages; this takes a few)."""
    base = _claimable(platforms, now, only_destination)
    expired = base.where(
        outbox.c.status == RowStatus.SENDING.value, outbox.c.lease_until < now
    ).order_by(outbox.c.lease_until, outbox.c.id)
    pending = base.where(
        outbox.c.status == RowStatus.PENDING.value, outbox.c.next_attempt_at <= now
    ).order_by(outbox.c.next_attempt_at, outbox.c.id)
    async with write_transaction(engine) as conn:
        rows = list((await conn.execute(expired.limit(limit))).all())
        if len(rows) < limit:
            rows += (await conn.execute(pending.limit(limit - len(rows)))).all()
        if rows:
            await conn.execute(
                update(outbox)
                .where(outbox.c.id.in_([r.id for r in rows]))
                .values(
                    status=RowStatus.SENDING.value,
                    lease_until=now + lease,
                    claimed_by=worker,
                    unsure_since=func.coalesce(outbox.c.unsure_since, now),
                )
            )
    return [
        Claimed(
            id=int(r.id),
            run_id=r.run_id,
            destination_id=int(r.destination_id),
            platform=Platform(r.platform),
            target=str(r.target),
            part=int(r.part),
            payload=dict(r.payload),
            attempts=int(r.attempts),
            consecutive_failures=int(r.consecutive_failures),
            created_at=r.created_at,
            maybe_sent_since=r.unsure_since,
            reply_to_part=r.reply_to_part,
            topic=r.topic,
        )
        for r in rows
    ]


async def release(engine: AsyncEngine, row: Claimed, worker: str) -> None:
    """Give back a row this worker claimed but did not send: pending again, no attempt
    counted, as unsure as it was before the claim. A row another worker took over after our
    lease ran out stays theirs."""
    async with write_transaction(engine) as conn:
        await conn.execute(
            update(outbox)
            .where(
                outbox.c.id == row.id,
                outbox.c.status == RowStatus.SENDING.value,
                outbox.c.claimed_by == worker,
            )
            .values(
                status=RowStatus.PENDING.value,
                lease_until=None,
                unsure_since=row.maybe_sent_since,
            )
        )


async def _finish_run_if_done(conn: AsyncConnection, run_id: int | None, now: datetime) -> None:
    if run_id is None:
        return
    statuses = [
        str(s)
        for (s,) in await conn.execute(select(outbox.c.status).where(outbox.c.run_id == run_id))
    ]
    if any(s in UNFINISHED for s in statuses):
        return
    run = (await conn.execute(select(digest_runs.c.status).where(digest_runs.c.id == run_id))).one()
    if run.status != RunStatus.PENDING.value:
        return
    failed = RowStatus.FAILED.value in statuses
    await conn.execute(
        update(digest_runs)
        .where(digest_runs.c.id == run_id)
        .values(
            status=(RunStatus.PARTIAL if failed else RunStatus.DELIVERED).value, finished_at=now
        )
    )
    await advance_members(conn, run_id)


async def renew(engine: AsyncEngine, row: Claimed, worker: str, until: datetime) -> bool:
    """Extend this worker's claim on a row; False when the row is no longer ours to send
    (recorded already, or taken over by another worker after our lease ran out)."""
    async with write_transaction(engine) as conn:
        result = await conn.execute(
            update(outbox)
            .where(
                outbox.c.id == row.id,
                outbox.c.status == RowStatus.SENDING.value,
                outbox.c.claimed_by == worker,
            )
            .values(lease_until=until)
        )
    return bool(result.rowcount)


async def mark_sent(
    engine: AsyncEngine, row: Claimed, external_id: str | None, now: datetime, pace_until: datetime
) -> None:
    """Record a message the platform accepted. Writing it again is harmless: a commit whose
    answer was lost with the connection is retried, and a row already sent stays as it was."""
    async with write_transaction(engine) as conn:
        await conn.execute(
            update(outbox)
            .where(outbox.c.id == row.id, outbox.c.status != RowStatus.SENT.value)
            .values(
                status=RowStatus.SENT.value,
                external_id=external_id,
                sent_at=now,
                attempts=outbox.c.attempts + 1,
                lease_until=None,
                last_error=None,
                unsure_since=None,
            )
        )
        await conn.execute(
            update(destinations)
            .where(destinations.c.id == row.destination_id)
            .values(consecutive_failures=0, next_send_at=pace_until)
        )
        await _finish_run_if_done(conn, row.run_id, now)


Retried = RetryAfter | Transient | Blocked | Moved
"""The answers that send a row back to pending (`mark_retry`)."""


async def mark_retry(
    engine: AsyncEngine, row: Claimed, outcome: Retried, at: datetime, *, worker: str | None = None
) -> None:
    """Back to pending until `at` after `outcome`; the whole destination waits too (Retry-After
    is per chat). Only a row still being sent (by `worker`, when given) goes back: written
    again after a lost answer, the retry neither counts twice nor takes back a row another
    sender claimed."""
    owned = [outbox.c.id == row.id, outbox.c.status == RowStatus.SENDING.value]
    if worker is not None:
        owned.append(outbox.c.claimed_by == worker)
    row_values, dest_values = _retry_values(outcome)
    async with write_transaction(engine) as conn:
        result = await conn.execute(
            update(outbox)
            .where(*owned)
            .values(
                status=RowStatus.PENDING.value,
                next_attempt_at=at,
                attempts=outbox.c.attempts + 1,
                lease_until=None,
                **row_values,
            )
        )
        if not result.rowcount:
            return
        await conn.execute(
            update(destinations)
            .where(destinations.c.id == row.destination_id)
            .values(next_send_at=at, **dest_values)
        )


def _retry_values(outcome: Retried) -> tuple[dict[str, Any], dict[str, Any]]:
    """What `outcome` writes besides the retry itself: (the row's columns, the destination's).
    A transient answer leaves the row unsure (a reset or a timeout after the request went out:
    the platform may have taken the message); any other answer says it did not."""
    error = "moved" if isinstance(outcome, Moved) else outcome.reason
    row: dict[str, Any] = {"last_error": error[:2000]}
    if not isinstance(outcome, Transient):
        row["unsure_since"] = None
    destination: dict[str, Any] = {}
    if isinstance(outcome, Blocked):  # one more refusal in a row
        destination["consecutive_failures"] = destinations.c.consecutive_failures + 1
    if isinstance(outcome, Moved):
        destination["target"] = outcome.new_target
    return row, destination


async def mark_failed(engine: AsyncEngine, row: Claimed, error: str, now: datetime) -> None:
    """This message cannot be delivered (the platform refused it for good); reported in status."""
    async with write_transaction(engine) as conn:
        await conn.execute(
            update(outbox)
            .where(outbox.c.id == row.id, outbox.c.status.in_(UNFINISHED))
            .values(
                status=RowStatus.FAILED.value,
                attempts=outbox.c.attempts + 1,
                lease_until=None,
                last_error=error[:2000],
                unsure_since=None,
            )
        )
        await _finish_run_if_done(conn, row.run_id, now)


async def deactivate(engine: AsyncEngine, destination_id: int, reason: str, now: datetime) -> None:
    """Stop sending to a destination for good; its queued messages fail with the reason."""
    async with write_transaction(engine) as conn:
        await conn.execute(
            update(destinations)
            .where(destinations.c.id == destination_id)
            .values(active=False, deactivated_reason=reason[:2000], updated_at=now)
        )
        run_ids = {
            r
            for (r,) in await conn.execute(
                select(outbox.c.run_id).where(
                    outbox.c.destination_id == destination_id, outbox.c.status.in_(UNFINISHED)
                )
            )
        }
        await conn.execute(
            update(outbox)
            .where(outbox.c.destination_id == destination_id, outbox.c.status.in_(UNFINISHED))
            .values(
                status=RowStatus.FAILED.value,
                lease_until=None,
                last_error=f"destination deactivated: {reason}"[:2000],
            )
        )
        for run_id in run_ids:
            await _finish_run_if_done(conn, run_id, now)


async def unfinished_count(
    engine: AsyncEngine, run_id: int | None = None, destination_id: int | None = None
) -> int:
    query = select(func.count()).select_from(outbox).where(outbox.c.status.in_(UNFINISHED))
    if run_id is not None:
        query = query.where(outbox.c.run_id == run_id)
    if destination_id is not None:
        query = query.where(outbox.c.destination_id == destination_id)
    async with engine.connect() as conn:
        return int((await conn.execute(query)).scalar_one())
