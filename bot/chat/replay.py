"""`subscribe test QUERY at CADENCE`: what a subscription would have delivered over
the last 30 days, before anyone turns it on. It reads and changes nothing else.

The window is the reports whose time (merged_at, else when the store first saw them) is in the
last `days` days: the `report_facets` index on that time answers it, and the query compiled to
SQL (store/search) narrows it to the candidates, so a chat command reads only the matches
(`bot.core.query.matches` stays the truth for each). A cron cadence's digest at each fire time
holds the matches whose time is after the previous fire and up to this one; each non-empty
digest is rendered with the real Renderer for the platform, so "messages per week" counts the
messages a channel would really get (a long digest splits). `now` posts each match alone.

Like a search, a replay has a time budget (`seconds`; past it QueryTooSlow, see
store/search/budget.py), and checks its candidates in a worker thread, off the event loop.

The real digest selects by ingest order, not by time; for a window in the past the two agree
except for reports ingested long after they merged, which the replay files under their merge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final
from zoneinfo import ZoneInfo

from bot.core.delivery.outbox import PLATFORM_FORMAT
from bot.core.digest.select import DigestFilter, StoredReport, build_digest
from bot.core.models import Locale, Platform
from bot.core.query import Query, unparse
from bot.core.render.renderer import Renderer
from bot.core.store.finder.window import WindowMatch, window_matches
from bot.core.store.reports import ReportStore
from bot.core.store.search.budget import DEFAULT_SECONDS
from bot.core.timing.cadence import Cadence

REPLAY_DAYS: Final = 30
NEWEST: Final = 5  # matches shown, newest first
DAYS_PER_WEEK: Final = 7
REPLAY_TITLE: Final = "replay"  # the digest title while counting (a destination's label later)
MAX_ITEMS: Final = 30  # a digest's entries before "+N more" (the config's default max_items)


@dataclass(frozen=True, slots=True)
class ReplayMatch:
    """One matching PR as the replay lists it; `at` is its merge time, else when first seen."""

    repo: str
    number: int
    title: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Replay:
    """What the subscription would have delivered over the last `days` days.

    `matched` counts every match in the window; `digests` and `messages_per_week` count the
    digests that fired in it (a match after the last fire waits for the next one). For `now`
    each match is a post of its own: `digests` is the number of posts."""

    days: int
    matched: int
    digests: int
    messages: int
    messages_per_week: float
    newest: tuple[ReplayMatch, ...]


async def replay(
    store: ReportStore,
    query: Query,
    cadence: Cadence,
    *,
    now: datetime,
    tz: str,
    renderer: Renderer,
    platform: Platform,
    locale: Locale,
    days: int = REPLAY_DAYS,
    max_items: int = MAX_ITEMS,
    seconds: float = DEFAULT_SECONDS,
) -> Replay:
    """Replay `query` at `cadence` (fire times in zone `tz`) over the `days` days up to `now`;
    QueryTooSlow past `seconds`."""
    found = await window_matches(
        store, query, now=now, start=now - timedelta(days=days), seconds=seconds
    )
    if cadence.cron is None:
        digests = messages = len(found)
    else:
        flt = DigestFilter(query=unparse(query), max_items=max_items)
        fmt = PLATFORM_FORMAT[platform]
        digests = messages = 0
        for fire, items in _by_fire(found, cadence, tz, now):
            digest = build_digest(items, flt, REPLAY_TITLE)
            local_date = fire.astimezone(ZoneInfo(tz)).date()
            messages += len(renderer.digest(digest, fmt, locale, date=local_date))
            digests += 1
    newest = sorted(found, key=lambda m: (m.at, m.item.seq), reverse=True)[:NEWEST]
    return Replay(
        days=days,
        matched=len(found),
        digests=digests,
        messages=messages,
        messages_per_week=messages / (days / DAYS_PER_WEEK) if days > 0 else 0.0,
        newest=tuple(_listed(match) for match in newest),
    )


def _by_fire(
    found: Sequence[WindowMatch], cadence: Cadence, tz: str, now: datetime
) -> list[tuple[datetime, list[StoredReport]]]:
    """The non-empty digests that fired by `now`: each fire with the matches after the
    previous fire and up to it. Asks for one fire time per digest, not one per fire (a cron
    firing every minute has 43,200 fires in 30 days)."""
    digests: list[tuple[datetime, list[StoredReport]]] = []
    fire: datetime | None = None
    for match in sorted(found, key=lambda m: (m.at, m.item.seq)):
        if fire is None or match.at > fire:
            fire = _next_fire(cadence, match.at, tz)
            if fire is None or fire > now:
                break
            digests.append((fire, []))
        digests[-1][1].append(match.item)
    return digests


def _next_fire(cadence: Cadence, after: datetime, tz: str) -> datetime | None:
    """The first fire >= after; None if none within the engine's horizon (a cron that fires
    only on 29 February was checked from today, and may not fire within a year of a report)."""
    try:
        return cadence.next_fire(after, tz)
    except ValueError:
        return None


def _listed(match: WindowMatch) -> ReplayMatch:
    report = match.item.report
    return ReplayMatch(report.repo, report.number, report.title, match.at)
