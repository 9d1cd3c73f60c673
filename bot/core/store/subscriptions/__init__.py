"""Subscriptions: what a destination reads and when. A destination holds any number of them.

Config channels are synced in (origin "config", one subscription per `channels[]` entry; entries
that share a target share the destination); chats add their own (origin "chat") with
`subscribe QUERY [at CADENCE]`. Each has its own watermark: a new chat subscription starts
from "now", so it is not flooded with the whole history. Every change a chat makes is kept in
`subscription_changes` (who, when, what) for `prdigest status`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.clock import Clock, utc_clock
from bot.core.models import Origin, Platform
from bot.core.store.sql.db import insert_ignore, write_transaction
from bot.core.store.sql.tables import destinations, subscriptions
from bot.core.store.subscriptions.changes import Change, recent_changes, record_change
from bot.core.store.subscriptions.config import (
    ConfigChannels,
    channel_query,
    channel_values,
    known_channel_tags,
)
from bot.core.store.subscriptions.destination_store import ensure_destination
from bot.core.store.subscriptions.filters import filter_from_json as filter_from_json
from bot.core.store.subscriptions.filters import filter_to_json as filter_to_json
from bot.core.store.subscriptions.limits import SubscriptionLimits, check_limits
from bot.core.store.subscriptions.new import NewSubscription as NewSubscription
from bot.core.store.subscriptions.reads import NOW as NOW
from bot.core.store.subscriptions.reads import Page as Page
from bot.core.store.subscriptions.reads import Subscription as Subscription
from bot.core.store.subscriptions.reads import current_seq as current_seq
from bot.core.store.subscriptions.reads import schedules_in, select_in

DEFAULT_CHAT_SCHEDULE = "0 9 * * mon-fri"
NAME_MAX = 128


async def _next_number(conn: AsyncConnection, destination_id: int) -> int:
    found = await conn.execute(
        select(func.max(subscriptions.c.number)).where(
            subscriptions.c.destination_id == destination_id
        )
    )
    return int(found.scalar() or 0) + 1


async def _insert_ignore(conn: AsyncConnection, values: dict[str, Any]) -> int | None:
    """Insert unless the number or the name is taken in the destination; the new id or None."""
    inserted = await insert_ignore(conn, subscriptions, values, subscriptions.c.id)
    return None if inserted is None else int(inserted)


class SubscriptionStore:
    def __init__(self, engine: AsyncEngine, clock: Clock = utc_clock) -> None:
        self.engine = engine
        self.clock = clock

    async def sync_config(self, config: ConfigChannels) -> list[Subscription]:
        """One subscription per config channel, in the destination of its target; a config
        subscription whose channel left the config is removed. Returns the config's."""
        async with write_transaction(self.engine) as conn:
            await self.sync_config_in(conn, config)
        return [s for s in await self.all() if s.origin is Origin.CONFIG]

    async def sync_config_in(self, conn: AsyncConnection, config: ConfigChannels) -> None:
        """`sync_config` in the caller's transaction (a dry run rolls it back)."""
        now = self.clock()
        kept: dict[int, set[str]] = {}
        specs = config.channel_specs()
        known = await known_channel_tags(self.engine, specs, config.rule_tags())
        queries = [channel_query(spec.filter.query, known) for spec in specs]
        for spec, query in zip(specs, queries, strict=True):
            dest_id = await ensure_destination(conn, spec.platform, spec.target, now)
            kept.setdefault(dest_id, set()).add(spec.name)
            values = {"origin": Origin.CONFIG.value, **channel_values(spec, query)}
            where = and_(
                subscriptions.c.destination_id == dest_id,
                subscriptions.c.name == spec.name,
            )
            done = await conn.execute(
                update(subscriptions).where(where).values(updated_at=now, **values)
            )
            if done.rowcount:
                continue
            fresh = {
                "destination_id": dest_id,
                "number": await _next_number(conn, dest_id),
                "name": spec.name,
                "watermark": 0,
                "owner": None,
                "created_at": now,
                "updated_at": now,
                **values,
            }
            await _insert_ignore(conn, fresh)  # a replica may have inserted it just now
        await self._drop_stale(conn, kept)

    async def _drop_stale(self, conn: AsyncConnection, kept: dict[int, set[str]]) -> None:
        rows = await conn.execute(
            select(subscriptions.c.id, subscriptions.c.destination_id, subscriptions.c.name).where(
                subscriptions.c.origin == Origin.CONFIG.value
            )
        )
        stale = [r.id for r in rows if r.name not in kept.get(int(r.destination_id), set())]
        if stale:
            await conn.execute(delete(subscriptions).where(subscriptions.c.id.in_(stale)))

    async def _select(self, *where: Any) -> list[Subscription]:
        async with self.engine.connect() as conn:
            return await select_in(conn, *where)

    async def active_pages(
        self,
        destinations_per_page: int,
        fires: Mapping[tuple[str, str], datetime] | None = None,
    ) -> AsyncIterator[Page]:
        """The subscriptions of active destinations, a page of destinations at a time (a
        destination's subscriptions are never split), so that a tick over 100,000 of them
        holds one page in memory. `fires`: the latest fire each (schedule, zone) may be due
        at; given, the subscriptions that cannot be due are left out (one whose runs reached
        its fire, a `now` one with nothing newer than its watermark; a schedule not in
        `fires` is read), so a tick with nothing due reads none."""
        after = 0
        while True:
            ids = (
                select(destinations.c.id)
                .where(destinations.c.active.is_(True), destinations.c.id > after)
                .order_by(destinations.c.id)
                .limit(destinations_per_page)
                .subquery()
            )
            async with self.engine.connect() as conn:  # (the page's bounds, not its ids)
                found = await conn.execute(select(func.count(), func.max(ids.c.id)))
                count, last = found.one()
                if not count:
                    return
                # The page as a range of destination ids, on both sides of the join (index
                # ranges: a list of 2,000 ids is what PostgreSQL's planner misjudges, and a
                # range on one side alone left it scanning every destination).
                page = await select_in(
                    conn,
                    destinations.c.active.is_(True),
                    destinations.c.id > after,
                    destinations.c.id <= last,
                    subscriptions.c.destination_id > after,
                    subscriptions.c.destination_id <= last,
                    fires=fires,
                )
            yield Page(int(count), page)
            after = int(last)

    async def schedules(self) -> set[tuple[str, str]]:
        """The (schedule, zone) pairs of the active destinations' subscriptions."""
        async with self.engine.connect() as conn:
            return await schedules_in(conn)

    async def active_destinations(self, at_most: int) -> int:
        """How many destinations are active, counted up to `at_most`."""
        active = select(destinations.c.id).where(destinations.c.active.is_(True)).limit(at_most)
        async with self.engine.connect() as conn:
            counted = await conn.execute(select(func.count()).select_from(active.subquery()))
            return int(counted.scalar_one())

    async def all(self, active_only: bool = False) -> list[Subscription]:
        return await self._select(*([destinations.c.active.is_(True)] if active_only else []))

    async def get(self, subscription_id: int) -> Subscription | None:
        found = await self._select(subscriptions.c.id == subscription_id)
        return found[0] if found else None

    async def named(self, name: str) -> list[Subscription]:
        return await self._select(subscriptions.c.name == name)

    @staticmethod
    async def named_in(conn: AsyncConnection, name: str) -> list[Subscription]:
        """`named` in the caller's transaction."""
        return await select_in(conn, subscriptions.c.name == name)

    async def owned_by(self, platform: Platform, owner: str) -> list[Subscription]:
        """A person's own subscriptions (made in their DMs) on a platform."""
        return await self._select(
            destinations.c.platform == platform.value, subscriptions.c.owner == owner
        )

    async def shared_targets(self, platform: Platform) -> list[str]:
        """The chats of a platform with digests for everyone there (no owner), active ones."""
        query = (
            select(destinations.c.target)
            .join(subscriptions, subscriptions.c.destination_id == destinations.c.id)
            .where(
                destinations.c.platform == platform.value,
                destinations.c.active.is_(True),
                subscriptions.c.owner.is_(None),
            )
            .group_by(destinations.c.target)
            .order_by(func.min(destinations.c.id))
        )
        async with self.engine.connect() as conn:
            return [str(target) for target in (await conn.execute(query)).scalars()]

    async def of(self, platform: Platform, target: str) -> list[Subscription]:
        """The destination's subscriptions, by number."""
        return await self._select(
            destinations.c.platform == platform.value, destinations.c.target == target
        )

    async def add(
        self,
        platform: Platform,
        target: str,
        new: NewSubscription,
        limits: SubscriptionLimits | None = None,
    ) -> Subscription:
        """A chat's new subscription, numbered next in its destination (reactivated if it
        was off); the change is recorded. Past one of `limits`: SubscriptionLimitReached."""
        now = self.clock()
        async with write_transaction(self.engine) as conn:
            dest_id = await ensure_destination(conn, platform, target, now)
            if limits is not None:
                await check_limits(conn, platform, dest_id, new.owner, limits, Origin.CHAT)
            await conn.execute(
                update(destinations)
                .where(destinations.c.id == dest_id, destinations.c.active.is_(False))
                .values(active=True, deactivated_reason=None, consecutive_failures=0)
            )
            number = await _next_number(conn, dest_id)
            taken = await conn.execute(
                select(subscriptions.c.id).where(
                    subscriptions.c.destination_id == dest_id, subscriptions.c.name == new.name
                )
            )
            name = new.name if taken.first() is None else f"{new.name} #{number}"
            values = new.values(name[:NAME_MAX], await current_seq(conn), now)
            new_id = await _insert_ignore(
                conn, {"destination_id": dest_id, "number": number, **values}
            )
            if new_id is None:
                raise RuntimeError("another change to this chat's subscriptions won; try again")
            await record_change(conn, dest_id, new.actor, "subscribe", f"{number}: {name}", now)
        found = await self.get(new_id)
        assert found is not None
        return found

    async def remove(
        self, destination_id: int, numbers: list[int] | None, actor: str, owner: str | None = None
    ) -> list[Subscription]:
        """Removes the chat-made subscriptions numbered `numbers` (None: all of them, or all of
        `owner`'s); returns what was removed."""
        where = [
            subscriptions.c.destination_id == destination_id,
            subscriptions.c.origin == Origin.CHAT.value,
        ]
        if numbers is not None:
            where.append(subscriptions.c.number.in_(numbers))
        if owner is not None:
            where.append(subscriptions.c.owner == owner)
        gone = await self._select(*where)
        if not gone:
            return []
        now = self.clock()
        async with write_transaction(self.engine) as conn:
            await conn.execute(
                delete(subscriptions).where(subscriptions.c.id.in_([s.id for s in gone]))
            )
            detail = ", ".join(f"{s.number}: {s.name}" for s in gone)
            await record_change(conn, destination_id, actor, "unsubscribe", detail, now)
        return gone

    async def set_schedule(self, ids: list[int], schedule: str, tz: str, actor: str) -> None:
        """A chat's `schedule`: these subscriptions post at `schedule` in zone `tz`."""
        now = self.clock()
        async with write_transaction(self.engine) as conn:
            await conn.execute(
                update(subscriptions)
                .where(subscriptions.c.id.in_(ids))
                .values(schedule=schedule, cadence=schedule, timezone=tz, updated_at=now)
            )
            dest = await conn.execute(
                select(subscriptions.c.destination_id).where(subscriptions.c.id == ids[0])
            )
            detail = f"schedule {schedule} ({tz})"
            await record_change(conn, int(dest.scalar_one()), actor, "schedule", detail, now)

    async def changes(self, limit: int = 10) -> list[Change]:
        """The newest changes made from chats, newest first."""
        return await recent_changes(self.engine, limit)
