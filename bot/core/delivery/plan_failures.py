"""A destination whose digest fails to plan or render: recorded on it, tried again later.

One destination's data can provoke a bug in planning or rendering (it did: a "matched:" line
naming 32 subscriptions overflowed the entry). The tick must go on for every other destination,
so the planner plans a failing batch again one destination at a time, and each one that still
fails is recorded here: how many tries in a row failed, the last error, when to try again
(PLAN_RETRY_FIRST, doubling up to PLAN_RETRY_MAX) and, once PLAN_TELL_AFTER tries in a row
failed, a notice queued to the chat, once a streak. The first planning that succeeds again
clears it all. `prdigest status` shows the error and the next try.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.delivery.runs import PLATFORM_FORMAT, Due, Run
from bot.core.render.renderer import Renderer
from bot.core.store.errors import is_outage
from bot.core.store.sql.db import write_transaction
from bot.core.store.sql.tables import destinations, outbox
from bot.core.store.statuses import RowStatus

logger = logging.getLogger("prdigest.delivery")

PLAN_RETRY_FIRST = timedelta(minutes=1)  # the wait after a first failure
PLAN_RETRY_MAX = timedelta(hours=1)  # the wait never grows past this
PLAN_TELL_AFTER = 3  # failures in a row before the chat is told (once a streak)
PLAN_ERROR_MAX = 300  # characters of the error kept (and shown by `prdigest status`)


@dataclass(frozen=True, slots=True)
class PlanFailure:
    """What recording one more failure came to."""

    failures: int  # in a row, this one included
    retry_at: datetime
    told: bool  # the chat was told now

    @property
    def first(self) -> bool:
        """The streak's first (logged with its traceback)."""
        return self.failures == 1


def plan_retry_delay(failures: int) -> timedelta:
    """How long a destination waits after `failures` failed tries in a row."""
    if failures <= 1:
        return PLAN_RETRY_FIRST
    doubled: timedelta = PLAN_RETRY_FIRST * 2 ** min(failures - 1, 30)
    return min(doubled, PLAN_RETRY_MAX)


def plan_error_text(error: BaseException) -> str:
    """`Type: first line of the message`, at most PLAN_ERROR_MAX characters."""
    lines = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return text if len(text) <= PLAN_ERROR_MAX else text[: PLAN_ERROR_MAX - 1] + "…"


async def record_plan_failure(
    engine: AsyncEngine,
    destination_id: int,
    error: str,
    now: datetime,
    notice: dict[str, Any] | None,
) -> PlanFailure:
    """Count one more failed try, set the next, and queue `notice` (the payload telling the chat)
    when the streak reaches PLAN_TELL_AFTER and the chat was not told yet."""
    where = destinations.c.id == destination_id
    async with write_transaction(engine) as conn:
        found = (
            await conn.execute(
                select(destinations.c.plan_failures, destinations.c.plan_told_at).where(where)
            )
        ).one()
        failures = int(found.plan_failures) + 1
        retry_at = now + plan_retry_delay(failures)
        values: dict[str, object] = {
            "plan_failures": failures,
            "plan_error": error,
            "plan_retry_at": retry_at,
        }
        told = failures >= PLAN_TELL_AFTER and found.plan_told_at is None and notice is not None
        if told:
            values["plan_told_at"] = now
            await conn.execute(
                outbox.insert().values(
                    run_id=None,
                    destination_id=destination_id,
                    part=0,
                    payload=notice,
                    status=RowStatus.PENDING.value,
                    attempts=0,
                    next_attempt_at=now,
                    created_at=now,
                )
            )
        await conn.execute(update(destinations).where(where).values(**values))
    return PlanFailure(failures, retry_at, told=told)


async def clear_plan_failures(conn: AsyncConnection, destination_ids: list[int]) -> None:
    """The destinations planned again: their failure streak is over."""
    if not destination_ids:
        return
    await conn.execute(
        update(destinations)
        .where(destinations.c.id.in_(destination_ids))
        .values(plan_failures=0, plan_error=None, plan_retry_at=None, plan_told_at=None)
    )


PlanBatch = Callable[[Sequence[Run]], Awaitable[None]]
FAILING_NOTICE = "digest_failing"  # the labels' notice key


async def plan_isolated(
    engine: AsyncEngine,
    items: Sequence[tuple[int, Sequence[Due]]],
    plan_batch: PlanBatch,
    renderer: Renderer,
    now: datetime,
) -> list[Run]:
    """Plan a batch of destinations in one transaction; when that fails for any reason but an
    outage, plan each alone, and record the ones that fail on their own. An outage is raised:
    the tick stops and the next one tries again, as before."""
    runs = [Run(destination, dues) for destination, dues in items]
    try:
        await plan_batch(runs)
        return runs
    except Exception as error:
        if is_outage(error):
            raise
        if len(runs) == 1:
            await _failed(engine, runs[0], error, renderer, now)
            return [Run(runs[0].destination_id, runs[0].due)]
    alone = []
    for destination, dues in items:
        run = Run(destination, dues)
        try:
            await plan_batch([run])
        except Exception as error:
            if is_outage(error):
                raise
            await _failed(engine, run, error, renderer, now)
            run = Run(destination, dues)  # not planned
        alone.append(run)
    return alone


async def _failed(
    engine: AsyncEngine, run: Run, error: Exception, renderer: Renderer, now: datetime
) -> None:
    """Record the failure on the destination, with the notice the chat gets if it persists."""
    lead = run.due[0].subscription
    text = plan_error_text(error)
    retry = now + plan_retry_delay(PLAN_TELL_AFTER)  # when the chat is told, the next try
    local = retry.astimezone(ZoneInfo(lead.timezone)).strftime("%Y-%m-%d %H:%M %Z")
    notice = renderer.notice(
        FAILING_NOTICE,
        PLATFORM_FORMAT[lead.platform],
        lead.locale,
        failures=str(PLAN_TELL_AFTER),
        retry=local,
        error=text,
    ).payload
    failure = await record_plan_failure(engine, run.destination_id, text, now, notice)
    fields = {
        "event": "digest.plan_failed",
        "fields": {
            "destination": lead.label,
            "destination_id": run.destination_id,
            "failures": failure.failures,
            "retry_at": failure.retry_at.isoformat(),
            "told": failure.told,
            "error": text,
        },
    }
    # Logged once a streak, with the traceback (a bug to fix); telling the chat is logged too,
    # the retries in between only at debug level.
    level = logging.ERROR if failure.first else logging.WARNING if failure.told else logging.DEBUG
    logger.log(level, "digest.plan_failed", exc_info=error if failure.first else None, extra=fields)
