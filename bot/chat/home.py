"""A person's home: their own subscriptions, the chats with digests, the newest must-reads.

Slack's App Home shows it today; the data is the platform's business only in how it is drawn.
Must-read PRs are those that match any of the person's subscriptions, each read as its digest
reads it (repos, tags, excluded tags and query together: `DigestFilter.query_ast`), so a
subscription that filters by tags alone finds its must-reads too.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from bot.chat.answers import Answerer
from bot.core.logs import log
from bot.core.models import Platform
from bot.core.query import And, Field, Or, Query, QueryError
from bot.core.store.finder.search import search
from bot.core.store.search.budget import QueryTooComplex, QueryTooSlow
from bot.core.store.subscriptions import Subscription

logger = logging.getLogger("prdigest.chat")

MUST_READ_SHOWN: Final = 5
MUST_READ_CANDIDATES: Final = 50  # best matches read, then the newest five of them shown


@dataclass(frozen=True, slots=True)
class HomeSubscription:
    number: int
    target: str  # the DM it was made in
    query: str  # as listings print it
    cadence: str
    next_post: str  # on its destination's working calendar


@dataclass(frozen=True, slots=True)
class MustRead:
    ref: str
    title: str
    url: str | None


@dataclass(frozen=True, slots=True)
class HomeData:
    mine: list[HomeSubscription]
    shared_chats: list[str]  # chats with digests for everyone (the adapter checks who is in)
    must_read: list[MustRead] = field(default_factory=list)


def must_read_query(subs: list[Subscription]) -> Query | None:
    """Must-read PRs that match any of `subs`; None when there is no subscription to match."""
    queries: list[Query] = []
    for sub in subs:
        try:
            query = sub.filter.query_ast
        except QueryError:
            continue
        if query is None:  # a filter that keeps every report: any must-read PR
            return Field("rec", ":", "must_read")
        queries.append(query)
    if not queries:
        return None
    anyone = queries[0] if len(queries) == 1 else Or(tuple(queries))
    return And((Field("rec", ":", "must_read"), anyone))


def _listed(answerer: Answerer, subs: list[Subscription], now: datetime) -> list[HomeSubscription]:
    return [
        HomeSubscription(
            sub.number,
            sub.target,
            sub.filter.listed_query(),
            sub.cadence,
            answerer.verbs.next_post(sub, now),
        )
        for sub in subs
    ]


async def owned_subscriptions(
    answerer: Answerer, platform: Platform, user: str, now: datetime
) -> list[HomeSubscription]:
    subs = await answerer.verbs.store.owned_by(platform, user)
    return _listed(answerer, subs, now)


async def _must_reads(
    answerer: Answerer, subs: list[Subscription], now: datetime
) -> list[MustRead]:
    query = must_read_query(subs)
    if query is None:
        return []
    try:
        found = await search(answerer.reports, query, limit=MUST_READ_CANDIDATES, now=now)
    except (QueryTooSlow, QueryTooComplex) as exc:  # the home shows the rest without them
        log(logger, "chat.home_must_reads_skipped", logging.WARNING, reason=str(exc))
        return []
    newest = sorted(found.hits, key=lambda h: (h.report.merged_at or now, h.seq))
    return [MustRead(h.report.ref, h.report.title, h.report.url) for h in newest[::-1]][
        :MUST_READ_SHOWN
    ]


async def home_data(answerer: Answerer, platform: Platform, user: str) -> HomeData:
    """What `user`'s home shows now: two store queries and one search."""
    now = answerer.clock()
    subs = await answerer.verbs.store.owned_by(platform, user)
    shared = await answerer.verbs.store.shared_targets(platform)
    return HomeData(_listed(answerer, subs, now), shared, await _must_reads(answerer, subs, now))
