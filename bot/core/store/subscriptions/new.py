"""A subscription a chat asks for, as the store writes it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.core.digest.select import DigestFilter
from bot.core.models import Layout, Locale, Origin, Verbosity
from bot.core.store.subscriptions.filters import filter_to_json


@dataclass(frozen=True, slots=True)
class NewSubscription:
    """What a chat asks for: `subscribe QUERY [at CADENCE]`."""

    name: str
    filter: DigestFilter
    schedule: str
    cadence: str
    timezone: str
    locale: Locale
    owner: str | None
    actor: str
    layout: Layout = Layout.FLAT
    verbosity: Verbosity = Verbosity.STANDARD

    def values(self, name: str, watermark: int, now: datetime) -> dict[str, Any]:
        return {
            "name": name,
            "origin": Origin.CHAT.value,
            "filters": filter_to_json(self.filter),
            "schedule": self.schedule,
            "cadence": self.cadence,
            "timezone": self.timezone,
            "locale": self.locale.value,
            "layout": self.layout.value,
            "verbosity": self.verbosity.value,
            "owner": self.owner,
            "post_empty": False,
            "locked": False,
            "watermark": watermark,
            "created_at": now,
            "updated_at": now,
        }
