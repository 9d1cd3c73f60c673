"""Chat subscriptions as a file (config as code): read them all for
`prdigest subscriptions export`, and make the store's equal to a file's for `... import`.

An import is keyed by (platform, target, number): an entry whose number the destination's chat
subscriptions lack is added under that number, one whose number they hold is updated when
anything differs (its watermark kept, so nothing is posted twice), and with `replace` the chat
subscriptions of a listed destination that the file lacks are removed. Destinations the file
does not list are left alone. Every check (a number or a name taken by a config subscription, a
destination locked in the config, two entries with one number or name) runs before the first
write, inside the one transaction that then does all the writes: a refused import writes
nothing. Each destination that changed gets one `import` row in the audit table.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.core.digest.select import DigestFilter
from bot.core.models import Layout, Locale, Origin, Platform, Verbosity
from bot.core.store.sql.db import write_transaction
from bot.core.store.sql.tables import destinations, subscriptions
from bot.core.store.subscriptions import (
    NewSubscription,
    Subscription,
    SubscriptionStore,
    current_seq,
    filter_from_json,
    filter_to_json,
)
from bot.core.store.subscriptions.changes import record_change
from bot.core.store.subscriptions.destination_store import ensure_destination

IMPORT = "import"  # the audit table's action
# The columns an import compares and writes; the rest (watermark, created_at) stay.
COMPARED = (
    "name",
    "filters",
    "schedule",
    "cadence",
    "timezone",
    "locale",
    "layout",
    "verbosity",
    "owner",
)


@dataclass(frozen=True, slots=True)
class Wanted:
    """One entry of an import file, checked: `index` is its place in the file's list."""

    index: int
    platform: Platform
    target: str
    number: int
    name: str
    filter: DigestFilter
    schedule: str  # a cron, or "now"
    cadence: str  # as written back: `daily 09:00`
    timezone: str
    locale: Locale
    layout: Layout
    verbosity: Verbosity
    owner: str | None

    @property
    def destination(self) -> tuple[str, str]:
        return (self.platform.value, self.target)

    def new(self, actor: str) -> NewSubscription:
        return NewSubscription(
            name=self.name,
            filter=self.filter,
            schedule=self.schedule,
            cadence=self.cadence,
            timezone=self.timezone,
            locale=self.locale,
            owner=self.owner,
            actor=actor,
            layout=self.layout,
            verbosity=self.verbosity,
        )

    def compared(self) -> dict[str, Any]:
        """The COMPARED columns as the store holds them."""
        return {
            "name": self.name,
            "filters": filter_to_json(self.filter),
            "schedule": self.schedule,
            "cadence": self.cadence,
            "timezone": self.timezone,
            "locale": self.locale.value,
            "layout": self.layout.value,
            "verbosity": self.verbosity.value,
            "owner": self.owner,
        }


@dataclass(frozen=True, slots=True)
class EntryError:
    """What is wrong with `subscriptions[index].field` (field "" for the entry as a whole)."""

    index: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"subscriptions[{self.index}]" + (f".{self.field}" if self.field else "")
        return f"{where}: {self.message}"


class ImportRefusedError(Exception):
    """The file does not fit the store: nothing was written."""

    def __init__(self, errors: list[EntryError]) -> None:
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = errors


@dataclass(frozen=True, slots=True)
class _Row:
    """A stored subscription of a listed destination, as the import compares it."""

    id: int
    number: int
    origin: Origin
    locked: bool
    values: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.values["name"])


@dataclass(slots=True)
class DestinationPlan:
    """What an import does to one destination."""

    platform: Platform
    target: str
    added: list[Wanted] = field(default_factory=list)
    updated: list[tuple[_Row, Wanted]] = field(default_factory=list)
    unchanged: list[Wanted] = field(default_factory=list)
    removed: list[_Row] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.platform.value}:{self.target}"

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    def detail(self) -> str:
        """`added 3: tag:x; updated 1: rollout; removed 2: sglang` (the audit row's)."""
        parts = [
            ("added", [(w.number, w.name) for w in self.added]),
            ("updated", [(w.number, w.name) for _, w in self.updated]),
            ("removed", [(r.number, r.name) for r in self.removed]),
        ]
        return "; ".join(
            f"{what} " + ", ".join(f"{n}: {name}" for n, name in items)
            for what, items in parts
            if items
        )


@dataclass(frozen=True, slots=True)
class ImportResult:
    plans: list[DestinationPlan]

    def count(self, what: str) -> int:
        return sum(len(getattr(plan, what)) for plan in self.plans)

    def summary(self) -> str:
        """`added 2, updated 1, unchanged 4, removed 0`"""
        kinds = ("added", "updated", "unchanged", "removed")
        return ", ".join(f"{kind} {self.count(kind)}" for kind in kinds)


def chat_order(subs: Iterable[Subscription]) -> list[Subscription]:
    """The chat-made subscriptions, by platform, target and number: the export's order."""
    made = (s for s in subs if s.origin is Origin.CHAT)
    return sorted(made, key=lambda s: (s.platform.value, s.target, s.number))


def plan_destination(
    plan: DestinationPlan, entries: list[Wanted], stored: list[_Row], replace: bool, config: str
) -> list[EntryError]:
    """Fills `plan` with what importing `entries` into a destination holding `stored` does;
    why it cannot, if it cannot (`config` says where the config lives)."""
    errors = _refusals(plan.label, entries, stored, replace, config)
    chat = {row.number: row for row in stored if row.origin is Origin.CHAT}
    for entry in entries:
        row = chat.get(entry.number)
        if row is None:
            plan.added.append(entry)
        elif row.values != entry.compared():
            plan.updated.append((row, entry))
        else:
            plan.unchanged.append(entry)
    if replace:
        listed = {entry.number for entry in entries}
        plan.removed = [row for n, row in sorted(chat.items()) if n not in listed]
    return errors


def _refusals(
    label: str, entries: list[Wanted], stored: list[_Row], replace: bool, config_file: str
) -> list[EntryError]:
    locked = next((row for row in stored if row.origin is Origin.CONFIG and row.locked), None)
    if locked is not None:
        message = (
            f"{label} is locked by config channel {locked.name!r} (locked: true in "
            f"{config_file}): change its subscriptions there"
        )
        return [EntryError(entries[0].index, "", message)]
    errors: list[EntryError] = []
    config = {row.number: row.name for row in stored if row.origin is Origin.CONFIG}
    listed = {entry.number for entry in entries}
    # the names the destination keeps besides the file's: its config subscriptions', and
    # without `replace` its chat subscriptions the file does not list
    kept = {row.name: row for row in stored if row.origin is Origin.CONFIG}
    if not replace:
        kept |= {r.name: r for r in stored if r.origin is Origin.CHAT and r.number not in listed}
    numbers: dict[int, int] = {}
    names: dict[str, int] = {}
    for entry in entries:
        if entry.number in config:
            taken = f"{label}'s config channel {config[entry.number]!r}"
            errors.append(EntryError(entry.index, "number", f"{entry.number} is taken by {taken}"))
        elif (first := numbers.setdefault(entry.number, entry.index)) != entry.index:
            message = f"{entry.number} is also subscriptions[{first}].number ({label})"
            errors.append(EntryError(entry.index, "number", message))
        if (other := kept.get(entry.name)) is not None:
            by_config = other.origin is Origin.CONFIG
            whose = "config channel" if by_config else f"subscription {other.number}"
            hint = "" if by_config else " (not in the file; --replace removes it)"
            message = f"{entry.name!r} is already the name of {label}'s {whose}{hint}"
            errors.append(EntryError(entry.index, "name", message))
        elif (first := names.setdefault(entry.name, entry.index)) != entry.index:
            message = f"{entry.name!r} is also subscriptions[{first}].name ({label})"
            errors.append(EntryError(entry.index, "name", message))
    return errors


class SubscriptionSync:
    """The import and export side of a SubscriptionStore."""

    def __init__(self, store: SubscriptionStore) -> None:
        self.store = store

    async def chat_subscriptions(self) -> list[Subscription]:
        return chat_order(await self.store.all())

    async def apply(
        self, wanted: list[Wanted], replace: bool, actor: str, config_file: str = "the config"
    ) -> ImportResult:
        """Make the chat subscriptions of every destination `wanted` lists equal to its
        entries (see the module docstring); ImportRefusedError, and nothing written, when the
        store's config subscriptions or the entries themselves forbid it."""
        groups: dict[tuple[str, str], list[Wanted]] = {}
        for entry in wanted:
            groups.setdefault(entry.destination, []).append(entry)
        now = self.store.clock()
        async with write_transaction(self.store.engine) as conn:
            plans: list[DestinationPlan] = []
            errors: list[EntryError] = []
            for key in sorted(groups):
                plan = DestinationPlan(Platform(key[0]), key[1])
                stored = await _stored(conn, *key)
                errors += plan_destination(plan, groups[key], stored, replace, config_file)
                plans.append(plan)
            if errors:
                raise ImportRefusedError(sorted(errors, key=lambda e: (e.index, e.field)))
            for plan in plans:
                if plan.changed:
                    await _write(conn, plan, actor, now)
        return ImportResult(plans)


async def _stored(conn: AsyncConnection, platform: str, target: str) -> list[_Row]:
    query = (
        select(subscriptions)
        .join(destinations, destinations.c.id == subscriptions.c.destination_id)
        .where(destinations.c.platform == platform, destinations.c.target == target)
        .order_by(subscriptions.c.number)
    )
    rows = (await conn.execute(query)).all()
    return [
        _Row(
            id=int(row.id),
            number=int(row.number),
            origin=Origin(row.origin),
            locked=bool(row.locked),
            values={key: _plain(key, getattr(row, key)) for key in COMPARED},
        )
        for row in rows
    ]


def _plain(key: str, value: Any) -> Any:
    """A stored value as Wanted.compared says it: a filter read back through DigestFilter."""
    return filter_to_json(filter_from_json(dict(value))) if key == "filters" else value


async def _write(conn: AsyncConnection, plan: DestinationPlan, actor: str, now: Any) -> None:
    dest_id = await ensure_destination(conn, plan.platform, plan.target, now)
    if plan.removed:
        gone = [row.id for row in plan.removed]
        await conn.execute(delete(subscriptions).where(subscriptions.c.id.in_(gone)))
    # Renamed ones first take a name of their own: two subscriptions may swap names.
    for row, entry in plan.updated:
        if row.name != entry.name:
            parked = f"import {row.id} {secrets.token_hex(6)}"
            await conn.execute(
                update(subscriptions).where(subscriptions.c.id == row.id).values(name=parked)
            )
    for row, entry in plan.updated:
        await conn.execute(
            update(subscriptions)
            .where(subscriptions.c.id == row.id)
            .values(updated_at=now, **entry.compared())
        )
    watermark = await current_seq(conn)  # a new one starts from now, as the chat's do
    for entry in plan.added:
        values = entry.new(actor).values(entry.name, watermark, now)
        await conn.execute(
            subscriptions.insert().values(destination_id=dest_id, number=entry.number, **values)
        )
    await record_change(conn, dest_id, actor, IMPORT, plan.detail(), now)
