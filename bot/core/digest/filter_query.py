"""A channel's filter as one query, and the plan a digest run evaluates it with.

A channel's `repos`, `tags` and `exclude_tags` (a config channel's or a chat subscription's)
mean the query

    (repo:a OR repo:b) (tag:x OR tag:y) -tag:ci -tag:docs

and a config channel's `query:` is ANDed after them. `filter_query` builds that Query: the one
meaning of a filter, the one `bot.core.query.matches` evaluates and check-config prints.

A digest run asks it of every report of a window for every due destination (10,000 chats at
9:00), so `compile_plan` turns it into a Plan once per destination: the top-level terms that
are only repos or tags become set lookups on what StoredReport worked out once (its folded tags
and repo), and `rest` holds every other term, evaluated by `bot.core.query.matches`. A Plan
says what `matches(query, …)` says (tests/core/digest/test_filter_query.py checks it on generated
queries and reports).

Time terms (`since:`, `before:`) in a channel's query count back from the digest's own time
(the run's scheduled time, so that replicas planning the same run agree) and read the report's
merge time; a report with no merge time matches neither.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import NamedTuple, Protocol, TypeVar

from bot.core.query import And, Field, Not, Or, Query, QueryError, matches, parse, unparse
from bot.core.query.evaluate import Prepared
from bot.core.reports.model import Report


class _Item(Protocol):
    """What a Plan reads of a stored report (select.StoredReport)."""

    @property
    def report(self) -> Report: ...
    @property
    def seq(self) -> int: ...
    @property
    def tag_set(self) -> frozenset[str]: ...
    @property
    def repo_key(self) -> tuple[str, str]: ...
    @property
    def prepared(self) -> Prepared: ...


ItemT = TypeVar("ItemT", bound=_Item)


def fold(value: str) -> str:
    """A tag or repo as a `tag:`/`repo:` term holds it: lowercase, inner spaces as one."""
    return " ".join(value.lower().split())


def repo_key(repo: str) -> tuple[str, str]:
    """`(owner/name, name)`, lowercase: what `repo:owner/name` and `repo:name` compare with."""
    full = repo.lower()
    return full, full.rsplit("/", 1)[-1]


def filter_query(
    repos: Sequence[str], tags: Sequence[str], exclude_tags: Sequence[str], query: str = ""
) -> Query | None:
    """The filter as one Query; None when it lets every report through. `query` is query
    text (QueryError when it is not one; a config's is checked when the config is loaded)."""
    parts: list[Query] = []
    if repos:
        parts.append(_any_of("repo", repos))
    if tags:
        parts.append(_any_of("tag", tags))
    parts.extend(Not(Field("tag", ":", tag)) for tag in dict.fromkeys(map(fold, exclude_tags)))
    if query.strip():
        parsed = parse(query, max_terms=None)  # stored: evaluated here, never as SQL
        parts.extend(parsed.items if isinstance(parsed, And) else (parsed,))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else And(tuple(parts))


EVERYTHING = "*"  # what a listing shows for a filter that lets every report through


def listed_query(
    repos: Sequence[str], tags: Sequence[str], exclude_tags: Sequence[str], query: str = ""
) -> str:
    """The filter as every listing prints it (`subscriptions`, `prdigest subscriptions list`,
    status, the Slack Home tab): the one query that is evaluated, written back as text that
    parses to the same matches, e.g.
    `repo:verl-project/verl (tag:rollout OR tag:sglang) -tag:ci`. EVERYTHING for no filter;
    query text that no longer parses is shown as stored."""
    try:
        built = filter_query(repos, tags, exclude_tags, query)
    except QueryError:
        return query
    return EVERYTHING if built is None else unparse(built)


def _any_of(name: str, values: Iterable[str]) -> Query:
    terms = tuple(Field(name, ":", value) for value in dict.fromkeys(map(fold, values)))
    return terms[0] if len(terms) == 1 else Or(terms)


class Plan(NamedTuple):
    """A filter's query, ready for many reports. None/empty: no such condition."""

    repos: frozenset[str] | None  # `repo:` values with an owner; None: any repo
    repo_names: frozenset[str]  # `repo:` values without one (the name after the slash)
    any_tags: frozenset[str] | None  # the report has one of these tags; None: any
    no_tags: frozenset[str]  # the report has none of these
    rest: Query | None  # every other top-level term, ANDed: bot.core.query.matches

    def keep(self, items: Iterable[ItemT], watermark: int, now: datetime) -> list[ItemT]:
        """The items after `watermark` that the query matches, in the order given."""
        # one comprehension, no call per item for repos and tags: a digest run filters every
        # item for every destination
        repos, names, any_tags, no_tags, rest = self
        return [
            item
            for item in items
            if item.seq > watermark
            and (repos is None or item.repo_key[0] in repos or item.repo_key[1] in names)
            and (any_tags is None or not item.tag_set.isdisjoint(any_tags))
            and (not no_tags or item.tag_set.isdisjoint(no_tags))
            and (rest is None or matches(rest, item.prepared, now=now))
        ]


def compile_plan(query: Query | None) -> Plan:
    """The Plan that keeps what `matches(query, …)` keeps (everything for None)."""
    items = () if query is None else query.items if isinstance(query, And) else (query,)
    repos: tuple[str, ...] | None = None
    any_tags: frozenset[str] | None = None
    no_tags: set[str] = set()
    rest: list[Query] = []
    for item in items:
        if repos is None and (values := _values_of(item, "repo")) is not None:
            repos = values
        elif any_tags is None and (values := _values_of(item, "tag")) is not None:
            any_tags = frozenset(values)
        elif isinstance(item, Not) and (values := _values_of(item.item, "tag")) is not None:
            no_tags.update(values)  # NOT (a OR b) AND NOT c: none of a, b, c
        else:
            rest.append(item)
    return Plan(
        repos=None if repos is None else frozenset(v for v in repos if "/" in v),
        repo_names=frozenset(() if repos is None else (v for v in repos if "/" not in v)),
        any_tags=any_tags,
        no_tags=frozenset(no_tags),
        rest=None if not rest else rest[0] if len(rest) == 1 else And(tuple(rest)),
    )


def plan_for(
    repos: Sequence[str], tags: Sequence[str], exclude_tags: Sequence[str], query: str = ""
) -> Plan:
    """`compile_plan(filter_query(...))`, without building the Query when there is no query
    text: the planning of 10,000 chat subscriptions per tick works out each one's Plan."""
    if query.strip():
        return compile_plan(filter_query(repos, tags, exclude_tags, query))
    folded = [fold(repo) for repo in repos]
    return Plan(
        repos=frozenset(v for v in folded if "/" in v) if folded else None,
        repo_names=frozenset(v for v in folded if "/" not in v),
        any_tags=frozenset(map(fold, tags)) if tags else None,
        no_tags=frozenset(map(fold, exclude_tags)),
        rest=None,
    )


def _values_of(query: Query, name: str) -> tuple[str, ...] | None:
    """The values of `name:v` or `name:v1 OR name:v2 …`; None when the query is not that."""
    terms = query.items if isinstance(query, Or) else (query,)
    if all(isinstance(t, Field) and t.name == name and t.op == ":" for t in terms):
        return tuple(t.value for t in terms if isinstance(t, Field))
    return None
