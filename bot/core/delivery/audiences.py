"""Who a run's digest is for: its audience (what the digest depends on, the key editions are
shared by), and how to build that digest.

The usual run (one subscription, nothing marked or posted before in its destination) is named
by what it picked from, in constant time (`alone`). A run of several subscriptions, or one in a
destination with reading marks or `now` posts, is named by each PR it shows and how (`merged`):
each PR once, saying which subscriptions matched it when several picked something ("matched:",
three names at most, see render/views.py), or when a `now` subscription already posted it
("posted 14:02", `posted_before`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Hashable, Mapping, Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.core.delivery.runs import Part, Run
from bot.core.digest.select import Digest, DigestFilter, StoredReport, build_digest, default_title
from bot.core.store.sql.bulk import among
from bot.core.store.sql.tables import instant_posts

POSTED_FORMAT = "%H:%M"  # "posted 14:02", in the subscription's zone
SINCE_FORMAT = "%m-%d %H:%M"  # a first digest's "reports since 12-04 09:00"
PERIOD_FORMAT = "%Y-%m-%d"  # a weekly's "2026-11-27 – 2026-12-04"


def alone(run: Run) -> tuple[Hashable, Callable[[], Digest]]:
    """`merged` for the usual run, one subscription and nothing marked or posted before in
    its destination: named by what it picked from (not by each PR), in constant time."""
    if len(run.parts) > 1:
        return merged(run, {})
    part = run.parts[0]
    flt = part.sub.filter
    if part.sub.instant:
        run.instant = sorted(item.seq for item in part.picked)
    picked = part.picked
    labels = _labels(run.parts)
    # The picks are the filter's over the window from `start`, so the default title (from the
    # filter and the picks) is named by the rest of the key: worked out once, by `build`.
    named = part.sub.title
    audience = ("alone", run.window, flt, part.start, part.fire, named, part.synthesis, labels)

    def build() -> Digest:
        title = named or default_title([flt], picked)
        items = sorted(picked, key=lambda item: item.seq)  # (no notes: one subscription)
        digest = build_digest(items, flt, title, synthesis=part.synthesis)
        return _labelled(digest, labels)

    return audience, build


def merged(run: Run, posted: Mapping[int, str]) -> tuple[Hashable, Callable[[], Digest]]:
    """What the run's merged digest depends on (each PR once, saying which subscriptions
    matched it when several picked something), and how to build it; sets the seqs its `now`
    subscriptions post."""
    chosen: dict[int, StoredReport] = {}
    matched: dict[int, list[str]] = {}
    for part in run.parts:
        for item in part.picked:
            chosen.setdefault(item.seq, item)
            matched.setdefault(item.seq, []).append(part.sub.label)
    run.instant = sorted(
        {item.seq for part in run.parts if part.sub.instant for item in part.picked}
    )
    instant = set(run.instant)
    several = sum(1 for part in run.parts if part.picked) > 1
    notes = {
        seq: (tuple(names) if several else (), "" if seq in instant else posted.get(seq, ""))
        for seq, names in matched.items()
    }
    flt, title = _combined(run.parts)
    synthesis = any(part.synthesis for part in run.parts)
    seqs = tuple(sorted(chosen))
    items = [chosen[seq] for seq in seqs]
    labels = _labels(run.parts)
    audience = (seqs, flt, title, tuple(sorted(notes.items())), synthesis, labels)

    def build() -> Digest:
        return _labelled(build_digest(items, flt, title, notes, synthesis=synthesis), labels)

    return audience, build


def _labelled(digest: Digest, labels: tuple[str, str]) -> Digest:
    since, period = labels
    return dataclasses.replace(digest, first_since=since, period=period) if any(labels) else digest


def _labels(parts: Sequence[Part]) -> tuple[str, str]:
    """What the header says of the run's time, in the zone of its subscription: a first
    digest's window ("12-04 09:00"; several first parts: the earliest start), a weekly's
    period ("11-27 – 12-04"); "" for either when it does not apply."""
    since = period = ""
    firsts = [part for part in parts if part.since is not None]
    if firsts:
        first = min(firsts, key=lambda part: part.since or part.fire)
        since = _since_label(first.since, first.sub.timezone)
    weeks = [part for part in parts if part.period_from is not None]
    if weeks:
        week = min(weeks, key=lambda part: part.period_from or part.fire)
        period = _period_label(week.period_from, week.fire, week.sub.timezone)
    return since, period


# Labels worked out once per time and zone: a tick's runs share a handful (every first digest
# of one schedule has the same window start).
@functools.lru_cache(maxsize=1024)
def _since_label(since: datetime | None, timezone: str) -> str:
    return since.astimezone(ZoneInfo(timezone)).strftime(SINCE_FORMAT) if since else ""


@functools.lru_cache(maxsize=1024)
def _period_label(period_from: datetime | None, fire: datetime, timezone: str) -> str:
    zone = ZoneInfo(timezone)
    start = period_from.astimezone(zone) if period_from else fire
    return f"{start:{PERIOD_FORMAT}} – {fire.astimezone(zone):{PERIOD_FORMAT}}"


async def posted_before(conn: AsyncConnection, runs: Sequence[Run]) -> dict[int, dict[int, str]]:
    """The new PRs each destination's `now` subscriptions already posted, with the time
    ("14:02" in the zone of the run's first subscription)."""
    zones = {run.destination_id: run.lead.timezone for run in runs}
    posts = instant_posts
    rows = await conn.execute(
        select(posts.c.destination_id, posts.c.seq, posts.c.posted_at).where(
            among(posts.c.destination_id, zones),
            posts.c.seq > min(run.seqs[0] for run in runs),
        )
    )
    found: dict[int, dict[int, str]] = {}
    for dest, seq, at in rows:
        zone = ZoneInfo(zones[int(dest)])
        found.setdefault(int(dest), {})[int(seq)] = at.astimezone(zone).strftime(POSTED_FORMAT)
    return found


def _combined(parts: Sequence[Part]) -> tuple[DigestFilter, str]:
    """The filter the merged digest is grouped and capped by, and its title: those of the
    subscriptions that picked something (all of them for an empty digest)."""
    shown = [part for part in parts if part.picked] or list(parts)
    named = [part.sub.title for part in parts if part.sub.title]  # the destination's own name
    title = named[0] if named else default_title(
        [part.sub.filter for part in shown], (item for part in shown for item in part.picked)
    )  # fmt: skip
    if len(shown) == 1:
        return shown[0].sub.filter, title
    tags = dict.fromkeys(tag for part in shown for tag in part.sub.filter.tags)
    flt = DigestFilter(tags=tuple(tags), max_items=max(part.sub.filter.max_items for part in shown))
    return flt, title
