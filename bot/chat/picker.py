"""`subscribe` with no arguments: what a picker offers, and what it picked as text.

Slack's modal and Telegram's keyboard offer the same choices (`known_choices`: the known tags
and repos with their counts, a minimum impact, the CADENCES) and both end in the same typed
command, `subscribe QUERY at CADENCE`, built here by `Pick.command_text`. So a picked
subscription is a typed one: the same parser, admin rule, announcement and audit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from bot.core.query import And, Field, Or, Query, unparse
from bot.core.store.reports import ReportStore
from bot.core.store.search.known import repo_counts

# The cadences a picker offers, as `subscribe ... at CADENCE` takes them.
CADENCES: Final = ("daily 09:00", "workdays 09:30", "weekly fri 17:00", "now")
# A minimum impact: `impact>=medium` also takes high.
IMPACTS: Final = ("high", "medium", "low")
CHOICES_WINDOW: Final = timedelta(days=30)  # tags and repos of the reports of the last 30 days


class EmptyPickError(ValueError):
    """Nothing was picked: no tag, no repo and no minimum impact."""


@dataclass(frozen=True, slots=True)
class Choices:
    tags: list[tuple[str, int]]  # (tag, reports), most first
    repos: list[tuple[str, int]]


@dataclass(frozen=True, slots=True)
class Pick:
    tags: tuple[str, ...] = ()
    repos: tuple[str, ...] = ()
    min_impact: str | None = None
    cadence: str = CADENCES[0]

    def command_text(self) -> str:
        """What `subscribe` would be typed with: `QUERY at CADENCE`."""
        return f"{picked_query(self.tags, self.repos, self.min_impact)} at {self.cadence}"


def _any_of(name: str, values: Sequence[str]) -> Query:
    fields = tuple(Field(name, ":", value) for value in dict.fromkeys(values))
    return fields[0] if len(fields) == 1 else Or(fields)


def picked_query(tags: Sequence[str], repos: Sequence[str], min_impact: str | None) -> str:
    """The query a pick means: any of the tags, in any of the repos, at least that impact:
    `(tag:a OR tag:b) repo:x/y impact>=medium`. Written by the query language's own writer,
    so a tag that needs quotes gets them. EmptyPickError when nothing was picked."""
    parts: list[Query] = []
    if tags:
        parts.append(_any_of("tag", tags))
    if repos:
        parts.append(_any_of("repo", repos))
    if min_impact:
        if min_impact not in IMPACTS:
            raise ValueError(f"impact must be one of {', '.join(IMPACTS)}")
        parts.append(Field("impact", ">=", min_impact))
    if not parts:
        raise EmptyPickError("pick a tag, a repo or a minimum impact")
    if len(parts) > 1:
        return unparse(And(tuple(parts)))
    only = unparse(parts[0])
    return f"({only})" if isinstance(parts[0], Or) else only  # kept apart from ` at CADENCE`


async def known_choices(reports: ReportStore, now: datetime) -> Choices:
    """The tags and repos of the last CHOICES_WINDOW, with their counts, most first."""
    since = now - CHOICES_WINDOW
    tags = [(tag, n) for tag, n in await reports.tag_counts(since) if writable(tag)]
    repos = [(repo, n) for repo, n in await repo_counts(reports.engine, since) if writable(repo)]
    return Choices(tags=tags, repos=repos)


def writable(value: str) -> bool:
    """A value a query can hold: the language has no escape for a double quote."""
    return bool(value) and '"' not in value
