"""Config channels as their subscriptions store them: plain values in, stored columns out.

The settings turn each `channels[]` entry into a ChannelSpec (`BotConfig.channel_specs`), so
the store reads no config model; `SubscriptionStore.sync_config` writes them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.digest.select import DigestFilter
from bot.core.models import Layout, Locale, Platform, Verbosity
from bot.core.query import parse, unparse
from bot.core.query.known_tags import bare_words, read_known_tags
from bot.core.store.search.known import known_tag_words
from bot.core.store.sql.tables import TITLE_MAX as TITLE_MAX
from bot.core.store.subscriptions.filters import filter_to_json


@dataclass(frozen=True, slots=True)
class ChannelSpec:
    """A config channel as its subscription stores it, in plain values (the settings build
    these: `BotConfig.channel_specs`)."""

    platform: Platform
    target: str
    name: str
    filter: DigestFilter  # its `query:` as written; the sync reads its known tags
    schedule: str
    cadence: str
    timezone: str
    locale: Locale
    layout: Layout
    verbosity: Verbosity
    post_empty: bool
    locked: bool
    urgent: bool = False  # quiet time does not hold it (`urgent: true`)
    holidays: bool = True  # the holidays hold it (`holidays: false`: they do not)
    title: str | None = None  # what its digest's header calls the destination


class ConfigChannels(Protocol):
    """What `sync_config` reads of a config: its channels and the tags its tag rules give."""

    def channel_specs(self) -> Sequence[ChannelSpec]: ...

    def rule_tags(self) -> frozenset[str]: ...


def channel_values(spec: ChannelSpec, query: str) -> dict[str, Any]:
    return {
        "filters": filter_to_json(replace(spec.filter, query=query)),
        "schedule": spec.schedule,
        "cadence": spec.cadence,
        "timezone": spec.timezone,
        "locale": spec.locale.value,
        "layout": spec.layout.value,
        "verbosity": spec.verbosity.value,
        "post_empty": spec.post_empty,
        "locked": spec.locked,
        "urgent": spec.urgent,
        "holidays": spec.holidays,
        "title": spec.title,
    }


def channel_query(text: str, known: Collection[str]) -> str:
    """A channel's `query:` as its subscription keeps it: the unquoted bare words that are in
    `known` (tags a tag rule gives or a stored report carries) read as tags."""
    if not text:
        return ""
    query = parse(text, max_terms=None)
    read = read_known_tags(query, known)
    return text if read == query else unparse(read)


async def known_channel_tags(
    engine: AsyncEngine, specs: Sequence[ChannelSpec], rules: frozenset[str]
) -> set[str]:
    """The bare words of the channels' queries that name a known tag."""
    words = {
        word
        for spec in specs
        if spec.filter.query
        for word in bare_words(parse(spec.filter.query, max_terms=None))
    }
    return await known_tag_words(engine, words, rules)
