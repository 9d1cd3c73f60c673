"""Subscriptions as the store reads them, and what a tick reads of them: the ones that may be
due, not every one.

A scheduled subscription whose runs reached the latest fire its schedule may be due at cannot
be due before the next fire, and a `now` one whose watermark is the newest report's has
nothing new to post: the tick's pages leave both out (`maybe_due`), so the ticks between two
fires read next to nothing however many subscriptions the store holds. What "the latest fire
it may be due at" is, the scheduler works out (bot/scheduling/tick.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, Text, and_, cast, exists, func, or_, select
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.core.digest.select import DigestFilter
from bot.core.models import Layout, Locale, Origin, Platform, Verbosity
from bot.core.record import record
from bot.core.store.sql.bulk import rows_of
from bot.core.store.sql.tables import counters, destinations, run_members, subscriptions
from bot.core.store.subscriptions.filters import stored_filter

NOW = "now"  # the schedule of a subscription that posts each matching PR as it arrives


@record
class Subscription:
    id: int
    destination_id: int
    platform: Platform
    target: str
    number: int
    name: str
    origin: Origin
    filter: DigestFilter
    schedule: str  # a cron, or NOW
    cadence: str  # as written: `daily 09:00`, a cron, `now`
    timezone: str
    locale: Locale
    layout: Layout
    verbosity: Verbosity
    owner: str | None
    post_empty: bool
    locked: bool
    watermark: int
    active: bool  # the destination's
    deactivated_reason: str | None
    plan_error: str | None = None  # the destination's digest last failed to plan, why
    plan_retry_at: datetime | None = None  # and not before then is it tried again
    urgent: bool = False  # not held by its destination's quiet time (config `urgent: true`)
    holidays: bool = True  # held by its destination's holidays (config `holidays: false`: not)
    title: str | None = None  # what its digest's header calls the destination (config `title:`)
    created_at: datetime | None = None  # fires before the day it was made are not caught up

    @property
    def label(self) -> str:
        return self.name

    @property
    def instant(self) -> bool:
        return self.schedule == NOW


_COLUMNS = (  # in Subscription's field order
    subscriptions.c.id,
    subscriptions.c.destination_id,
    destinations.c.platform,
    destinations.c.target,
    subscriptions.c.number,
    subscriptions.c.name,
    subscriptions.c.origin,
    # As text: most subscriptions share a few hundred filters, parsed once each.
    cast(subscriptions.c.filters, Text).label("filters"),
    subscriptions.c.schedule,
    subscriptions.c.cadence,
    subscriptions.c.timezone,
    subscriptions.c.locale,
    subscriptions.c.layout,
    subscriptions.c.verbosity,
    subscriptions.c.owner,
    subscriptions.c.post_empty,
    subscriptions.c.locked,
    subscriptions.c.watermark,
    destinations.c.active,
    destinations.c.deactivated_reason,
    destinations.c.plan_error,
    destinations.c.plan_retry_at,
    subscriptions.c.urgent,
    subscriptions.c.holidays,
    subscriptions.c.title,
    subscriptions.c.created_at,
)


_PLATFORMS = {platform.value: platform for platform in Platform}
_LOCALES = {locale.value: locale for locale in Locale}
_ORIGINS = {origin.value: origin for origin in Origin}
_LAYOUTS = {layout.value: layout for layout in Layout}
_VERBOSITIES = {verbosity.value: verbosity for verbosity in Verbosity}


def _from_row(row: Any) -> Subscription:
    """A row of _COLUMNS (a tick reads 100,000 of them: by position, the driver's types kept
    where they already are the field's; its words by dict, faster than an enum's lookup)."""
    id_, dest, platform, target, number, name, origin, filters, schedule, cadence = row[:10]
    zone, locale, layout, verbosity, owner, post_empty, locked, watermark, active, why = row[10:20]
    plan_error, plan_retry_at, urgent, holidays, title, created_at = row[20:]
    return Subscription(
        id_, dest, _PLATFORMS[platform], target, number, name, _ORIGINS[origin],
        stored_filter(filters), schedule, cadence, zone, _LOCALES[locale], _LAYOUTS[layout],
        _VERBOSITIES[verbosity], owner, bool(post_empty), bool(locked), watermark, bool(active),
        why, plan_error, plan_retry_at, bool(urgent), bool(holidays), title, created_at,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Page:
    """A page of active destinations: how many, and their subscriptions (those that may be
    due, when the page was asked with the fires they are due at)."""

    destinations: int
    subscriptions: list[Subscription]


def newest_seq() -> Select[Any]:
    """The newest report's sequence number (its counter's row; none in an empty store)."""
    # (reports.SEQ_COUNTER, not imported: bot/core/store imports this package)
    return select(counters.c.value).where(counters.c.name == "report_seq")


def maybe_due(
    query: Select[Any], dialect: Dialect, fires: Mapping[tuple[str, str], datetime]
) -> Select[Any]:
    """`query` (over subscriptions) without those that cannot be due: a scheduled one whose
    runs reached its schedule's fire in `fires` (by schedule and zone; one index probe each;
    a schedule not in `fires` is kept), a `now` one whose watermark is the newest report's."""
    fired = rows_of(
        dialect,
        {
            "schedule": (subscriptions.c.schedule.type, [schedule for schedule, _ in fires]),
            "timezone": (subscriptions.c.timezone.type, [zone for _, zone in fires]),
            "fire": (run_members.c.scheduled_for.type, list(fires.values())),
        },
    ).subquery("fired")
    reached = exists().where(
        run_members.c.subscription_id == subscriptions.c.id,
        run_members.c.scheduled_for >= fired.c.fire,
    )
    same = and_(
        fired.c.schedule == subscriptions.c.schedule, fired.c.timezone == subscriptions.c.timezone
    )
    newest = func.coalesce(newest_seq().scalar_subquery(), 0)
    return query.outerjoin(fired, same).where(
        or_(fired.c.fire.is_(None), ~reached),
        or_(subscriptions.c.schedule != NOW, subscriptions.c.watermark < newest),
    )


async def schedules_in(conn: AsyncConnection) -> set[tuple[str, str]]:
    """The (schedule, zone) pairs of the active destinations' subscriptions."""
    query = (
        select(subscriptions.c.schedule, subscriptions.c.timezone)
        .join(destinations, destinations.c.id == subscriptions.c.destination_id)
        .where(destinations.c.active.is_(True))
        .distinct()
    )
    return {(str(schedule), str(zone)) for schedule, zone in await conn.execute(query)}


async def current_seq(conn: AsyncConnection) -> int:
    value = (await conn.execute(newest_seq())).scalar()
    return int(value or 0)


async def select_in(
    conn: AsyncConnection, *where: Any, fires: Mapping[tuple[str, str], datetime] | None = None
) -> list[Subscription]:
    """The subscriptions `where` says, in destination and number order (`fires`: only those
    that may be due, `maybe_due`)."""
    query = (
        select(*_COLUMNS)
        .join(destinations, destinations.c.id == subscriptions.c.destination_id)
        .where(*where)
        .order_by(subscriptions.c.destination_id, subscriptions.c.number)
    )
    if fires is not None:
        query = maybe_due(query, conn.dialect, fires)
    return [_from_row(row) for row in (await conn.execute(query)).all()]
