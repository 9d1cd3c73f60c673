"""Destinations: where digests go. Config channels are synced in; chats subscribe themselves.

A destination is keyed by (platform, target). Its filter, schedule and locale come from the
config file (origin "config") or from the chat's own commands (origin "chat"). A destination
that fails for good (channel archived, bot kicked) is deactivated with the reason and kept,
so `prdigest status` can say why and re-adding the bot can turn it back on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.core.clock import Clock, utc_clock
from bot.core.models import Locale, Platform
from bot.core.select import DigestFilter
from bot.core.store.db import write_transaction
from bot.core.store.tables import counters, destinations
from bot.settings import BotConfig, Channel

CONFIG = "config"
CHAT = "chat"
DEFAULT_CHAT_SCHEDULE = "0 9 * * mon-fri"


@dataclass(frozen=True, slots=True)
class Destination:
    id: int
    platform: Platform
    target: str
    name: str | None
    origin: str
    filter: DigestFilter
    schedule: str
    timezone: str
    locale: Locale
    post_empty: bool
    active: bool
    deactivated_reason: str | None
    consecutive_failures: int
    watermark: int

    @property
    def label(self) -> str:
        return self.name or f"{self.platform.value}:{self.target}"


def filter_to_json(flt: DigestFilter) -> dict[str, Any]:
    """The stored filter. A config channel's `query:` is kept as its text (a key of the JSON
    column, written only when there is one: no migration, and older rows read as before);
    chat subscriptions have none yet."""
    data: dict[str, Any] = {
        "repos": list(flt.repos),
        "tags": list(flt.tags),
        "exclude_tags": list(flt.exclude_tags),
        "max_items": flt.max_items,
    }
    if flt.query:
        data["query"] = flt.query
    return data


def filter_from_json(data: dict[str, Any]) -> DigestFilter:
    return DigestFilter(
        repos=tuple(data.get("repos", ())),
        tags=tuple(data.get("tags", ())),
        exclude_tags=tuple(data.get("exclude_tags", ())),
        max_items=int(data.get("max_items", 30)),
        query=str(data.get("query") or ""),
    )


def _from_row(row: Any) -> Destination:
    return Destination(
        id=int(row.id),
        platform=Platform(row.platform),
        target=str(row.target),
        name=row.name,
        origin=str(row.origin),
        filter=filter_from_json(dict(row.filters)),
        schedule=str(row.schedule),
        timezone=str(row.timezone),
        locale=Locale(row.locale),
        post_empty=bool(row.post_empty),
        active=bool(row.active),
        deactivated_reason=row.deactivated_reason,
        consecutive_failures=int(row.consecutive_failures),
        watermark=int(row.watermark),
    )


def _channel_values(config: BotConfig, channel: Channel) -> dict[str, Any]:
    return {
        "name": channel.name,
        "origin": CONFIG,
        "filters": filter_to_json(DigestFilter.from_channel(channel)),
        "schedule": channel.schedule,
        "timezone": config.channel_timezone(channel),
        "locale": config.channel_locale(channel).value,
        "post_empty": channel.post_empty,
    }


class DestinationStore:
    def __init__(self, engine: AsyncEngine, clock: Clock = utc_clock) -> None:
        self.engine = engine
        self.clock = clock  # stamps created_at / updated_at

    async def sync_config(self, config: BotConfig) -> list[Destination]:
        """Insert or update one destination per config channel; returns them.

        Replicas start at the same time: the insert is ON CONFLICT DO NOTHING, then updated."""
        now = self.clock()
        async with write_transaction(self.engine) as conn:
            for channel in config.channels:
                values = _channel_values(config, channel)
                fresh = {
                    "active": True,
                    "consecutive_failures": 0,
                    "watermark": 0,
                    "created_at": now,
                    "updated_at": now,
                }
                await _insert_ignore(conn, channel.platform, channel.target, {**values, **fresh})
                await conn.execute(
                    update(destinations)
                    .where(
                        destinations.c.platform == channel.platform.value,
                        destinations.c.target == channel.target,
                    )
                    .values(updated_at=now, **values)
                )
        return [d for d in await self.all() if d.origin == CONFIG]

    async def _row(self, conn: AsyncConnection, platform: Platform, target: str) -> Any:
        return (
            await conn.execute(
                select(destinations).where(
                    destinations.c.platform == platform.value, destinations.c.target == target
                )
            )
        ).first()

    async def all(self, active_only: bool = False) -> list[Destination]:
        query = select(destinations).order_by(destinations.c.id)
        if active_only:
            query = query.where(destinations.c.active.is_(True))
        async with self.engine.connect() as conn:
            return [_from_row(row) for row in (await conn.execute(query)).all()]

    async def get(self, destination_id: int) -> Destination | None:
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(select(destinations).where(destinations.c.id == destination_id))
            ).first()
        return None if row is None else _from_row(row)

    async def find(self, platform: Platform, target: str) -> Destination | None:
        async with self.engine.connect() as conn:
            row = await self._row(conn, platform, target)
        return None if row is None else _from_row(row)

    async def save_chat(
        self,
        platform: Platform,
        target: str,
        flt: DigestFilter,
        *,
        schedule: str | None = None,
        timezone: str,
        locale: Locale,
    ) -> Destination:
        """Create or change a chat's own subscription (and reactivate it)."""
        now = self.clock()
        async with write_transaction(self.engine) as conn:
            values: dict[str, Any] = {"filters": filter_to_json(flt), "updated_at": now}
            if schedule is not None:
                values["schedule"] = schedule
                values["timezone"] = timezone
            created = {
                "name": None,
                "origin": CHAT,
                "schedule": schedule or DEFAULT_CHAT_SCHEDULE,
                "timezone": timezone,
                "locale": locale.value,
                "post_empty": False,
                "active": True,
                "consecutive_failures": 0,
                "watermark": await _current_seq(conn),
                "created_at": now,
                **values,
            }
            if not await _insert_ignore(conn, platform, target, created):
                await conn.execute(
                    update(destinations)
                    .where(
                        destinations.c.platform == platform.value,
                        destinations.c.target == target,
                    )
                    .values(**values)
                )
        found = await self.find(platform, target)
        assert found is not None
        return found

    async def set_active(
        self, destination_id: int, active: bool, reason: str | None = None
    ) -> None:
        async with write_transaction(self.engine) as conn:
            await conn.execute(
                update(destinations)
                .where(destinations.c.id == destination_id)
                .values(
                    active=active,
                    deactivated_reason=None if active else reason,
                    consecutive_failures=0,
                    updated_at=self.clock(),
                )
            )

    async def move(self, destination_id: int, new_target: str) -> None:
        """A Telegram group became a supergroup: same subscription, new chat id."""
        async with write_transaction(self.engine) as conn:
            await conn.execute(
                update(destinations)
                .where(destinations.c.id == destination_id)
                .values(target=new_target, updated_at=self.clock())
            )


async def _current_seq(conn: AsyncConnection) -> int:
    # A new chat subscription starts from "now": it is not flooded with the whole history.
    value = (
        await conn.execute(select(counters.c.value).where(counters.c.name == "report_seq"))
    ).scalar()
    return int(value or 0)


async def _insert_ignore(
    conn: AsyncConnection, platform: Platform, target: str, values: dict[str, Any]
) -> bool:
    """Insert the destination unless (platform, target) exists; True if inserted."""
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    statement = (
        insert(destinations)
        .values(platform=platform.value, target=target, **values)
        .on_conflict_do_nothing(index_elements=["platform", "target"])
        .returning(destinations.c.id)
    )
    # rowcount is not reliable for ON CONFLICT DO NOTHING across drivers; RETURNING is.
    return (await conn.execute(statement)).scalar() is not None
