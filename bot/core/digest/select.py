"""What a channel's next digest holds: pure functions over stored reports, no I/O.

A digest run asks the store for reports ingested after the channel's watermark, keeps those
the channel wants (`matches`), and builds the tag view (`build_digest`): each PR once, under
its first tag in the channel's `tags` order (else its own first tag, untagged under "other"),
must-read first, then impact high → low, then merge time; at most `max_items` entries, the
rest counted as "+N more"; and a rollup for the header: the counts, and the risk flags that
two or more PRs share (compared after folding case, width and punctuation). A digest whose PRs
come from more than one repo names each entry's repo (`show_repo`); `synthesis=True` adds the
weekly synthesis of every item (bot/core/digest/synthesis.py).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from itertools import chain
from operator import attrgetter

from bot.core.digest.filter_query import Plan, filter_query, fold, listed_query, plan_for, repo_key
from bot.core.digest.synthesis import Synthesis, synthesize
from bot.core.query import Query
from bot.core.query.evaluate import Prepared
from bot.core.record import record
from bot.core.reports.model import ImpactLevel, RecommendationLevel, Report

OTHER_TAG = "other"
TOP_FLAGS = 5
SHARED_FLAG_MIN = 2  # a flag enters the rollup when at least this many PRs share it
FLAG_KEYS = 8192  # flag_key remembers this many flags (a window holds a few thousand)

# (map over attrgetters: a tick runs these over every audience's items, hundreds each)
_RANK, _HIGH = attrgetter("rank"), attrgetter("high")
_REPO_KEY = attrgetter("repo_key")
_IMPACT_RANK = {ImpactLevel.HIGH: 0, ImpactLevel.MEDIUM: 1, ImpactLevel.LOW: 2, None: 3}


@dataclass(frozen=True, slots=True)
class StoredReport:
    """A report as the store returns it.

    The folded tags and repo (filter_query.fold, repo_key), the distinct risk flags and the
    sort key are worked out once here: a digest run filters and ranks the same items for
    every channel."""

    report: Report
    seq: int  # ingest sequence (monotonic): "new since watermark" means seq > watermark
    revision: int = 1  # 1 = first version; >1 = updated since first ingested
    tag_set: frozenset[str] = field(init=False, repr=False, compare=False)
    repo_key: tuple[str, str] = field(init=False, repr=False, compare=False)
    flags: tuple[str, ...] = field(init=False, repr=False, compare=False)
    # (flag_key, flag) of each flag, in order: a tick's rollups compare them for every digest
    flag_keys: tuple[tuple[str, str], ...] = field(init=False, repr=False, compare=False)
    flag_set: tuple[str, ...] = field(init=False, repr=False, compare=False)  # distinct keys
    rank: int = field(init=False, repr=False, compare=False)  # smaller sorts first
    # how an edition lists it behind "+N more": (seq, repo, number, tag, must_read), its tag
    # the one it is shown under without a channel's order (a tick lists a million of these)
    listing: tuple[int, str, int, str, bool] = field(init=False, repr=False, compare=False)
    # the text a channel's query reads, normalized once for every destination of a tick
    prepared: Prepared = field(init=False, repr=False, compare=False)
    # its tags in lowercase, as a channel's `tags` are (`group_tag` compares them per digest)
    lower_tags: tuple[str, ...] = field(init=False, repr=False, compare=False)
    high: bool = field(init=False, repr=False, compare=False)  # of high impact

    def __post_init__(self) -> None:
        stripped = (flag.strip() for flag in self.report.risk_flags)
        object.__setattr__(self, "tag_set", frozenset(fold(tag) for tag in self.report.tags))
        object.__setattr__(self, "repo_key", repo_key(self.report.repo))
        object.__setattr__(self, "flags", tuple(dict.fromkeys(f for f in stripped if f)))
        object.__setattr__(self, "flag_keys", tuple((flag_key(f), f) for f in self.flags))
        distinct = dict.fromkeys(key for key, _ in self.flag_keys if key)
        object.__setattr__(self, "flag_set", tuple(distinct))
        object.__setattr__(self, "rank", _importance(self.report, self.seq))
        object.__setattr__(self, "lower_tags", tuple(tag.lower() for tag in self.report.tags))
        object.__setattr__(self, "high", self.report.impact_level is ImpactLevel.HIGH)
        must = self.report.recommendation_level is RecommendationLevel.MUST_READ
        listed = (self.seq, self.report.repo, self.report.number, self.group_tag(()), must)
        object.__setattr__(self, "listing", listed)
        object.__setattr__(self, "prepared", Prepared(self.report))

    def group_tag(self, wanted: Sequence[str]) -> str:
        """The tag it is shown under: its first tag in the channel's order (`wanted`,
        lowercase), else its own first."""
        own = self.lower_tags
        for tag in wanted:
            if tag in own:
                return tag
        return own[0] if own else OTHER_TAG


@dataclass(frozen=True, slots=True)
class DigestFilter:
    """The part of a channel's config that decides what its digest holds.

    `repos`, `tags`, `exclude_tags` and `query` (query text, a config channel's `query:`) mean
    one Query (`query_ast`, filter_query.filter_query); a digest run evaluates its Plan
    (the same query, ready for many reports), worked out once per filter when first asked."""

    repos: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()
    max_items: int = 30
    query: str = ""
    _plan: Plan | None = field(default=None, init=False, repr=False, compare=False)
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # tags compare lowercase (as the parser and the config store them)
        object.__setattr__(self, "tags", tuple(tag.lower() for tag in self.tags))
        object.__setattr__(self, "exclude_tags", tuple(tag.lower() for tag in self.exclude_tags))
        object.__setattr__(self, "query", self.query.strip())
        fields = (self.repos, self.tags, self.exclude_tags, self.max_items, self.query)
        object.__setattr__(self, "_hash", hash(fields))

    def __hash__(self) -> int:
        """Worked out once: a tick hashes a filter several times per destination (the picks,
        the audience, the edition are keyed by it)."""
        return self._hash

    @property
    def query_ast(self) -> Query | None:
        """The filter as one query; None when the channel takes every report."""
        return filter_query(self.repos, self.tags, self.exclude_tags, self.query)

    def listed_query(self) -> str:
        """The filter as listings print it: the evaluated query as text, `*` for none."""
        return listed_query(self.repos, self.tags, self.exclude_tags, self.query)

    @property
    def plan(self) -> Plan:
        """The query ready for many reports, worked out once (filter_query.plan_for)."""
        if self._plan is None:
            plan = plan_for(self.repos, self.tags, self.exclude_tags, self.query)
            object.__setattr__(self, "_plan", plan)
            return plan
        return self._plan


def matches(item: StoredReport, flt: DigestFilter, now: datetime | None = None) -> bool:
    """Whether the channel wants this report: repo listed (or none listed), any wanted tag
    (or none listed), no excluded tag, and the channel's query. Tags and repos compare
    case-insensitively. Time terms count back from `now` (else the current time)."""
    return bool(flt.plan.keep((item,), item.seq - 1, now or datetime.now(UTC)))


def select_new(
    items: Iterable[StoredReport],
    flt: DigestFilter,
    watermark: int,
    now: datetime | None = None,
) -> list[StoredReport]:
    """Reports ingested after `watermark` that the channel wants, in ingest order. A time term
    in the channel's query counts back from `now`: the digest's time (else the current time)."""
    chosen = flt.plan.keep(items, watermark, now or datetime.now(UTC))
    chosen.sort(key=lambda item: item.seq)
    return chosen


@record
class DigestEntry:
    """One PR in the digest, under the tag it is shown with."""

    item: StoredReport
    tag: str
    matched: tuple[str, ...] = ()  # the subscriptions that chose it (a digest serving several)
    posted: str = ""  # a `now` subscription posted it already, at this time ("14:02")

    @property
    def report(self) -> Report:
        return self.item.report

    @property
    def updated(self) -> bool:
        return self.item.revision > 1


@record
class TagGroup:
    tag: str
    entries: tuple[DigestEntry, ...]


@dataclass(frozen=True, slots=True)
class Digest:
    title: str  # the destination's title, else its one repo; "" says "PR digest"
    groups: tuple[TagGroup, ...]
    total: int
    shown: int
    more: int  # entries not shown anywhere in this digest, posted as "+N more"
    high_impact: int
    top_flags: tuple[tuple[str, int], ...]  # most frequent risk flags: count desc, first seen
    # must-read PRs of earlier digests here that nobody marked read ("Still unread (2)")
    unread: tuple[DigestEntry, ...] = ()
    unread_dropped: int = 0  # unread PRs that passed `unread_days` now and leave (noted once)
    # the entries one digest may show (max_items), new first, then unread; None: no limit
    budget: int | None = None
    overflow: tuple[StoredReport, ...] = ()  # new items past the budget, best first
    unread_over: tuple[DigestEntry, ...] = ()  # unread PRs past the budget: behind "+N more"
    show_repo: bool = False  # entries come from more than one repo: name it (`sglang#9087`)
    synthesis: Synthesis | None = None  # the weekly synthesis of every item (cadences > a day)
    first_since: str = ""  # a first digest: the reports since this (local "12-04 09:00")
    period: str = ""  # a weekly: the days it covers ("2026-11-27 – 2026-12-04"), for its date

    @property
    def is_empty(self) -> bool:
        return self.total == 0

    @property
    def only_reposts(self) -> bool:
        """Every PR it shows was posted here already by a `now` subscription, and nothing else
        waits (no unread, no "+N more"): sending it would only repeat those posts."""
        if self.more or self.unread:
            return False
        shows = False  # (asked of every run planned: stops at the first PR not posted)
        for group in self.groups:
            for entry in group.entries:
                if not entry.posted:
                    return False
                shows = True
        return shows

    @property
    def worth_sending(self) -> bool:
        return not self.is_empty and not self.only_reposts


def default_title(filters: Iterable[DigestFilter], items: Iterable[StoredReport] = ()) -> str:
    """The title of a digest whose destination has none: the repo its subscriptions all
    follow, else the one repo all its PRs come from; else empty, and the header says what
    the digest is ("PR digest"). Never the subscriptions' own names: those are the bot's
    words for them, not the reader's."""
    followed = {tuple(flt.repos) for flt in filters}
    if len(followed) == 1 and len(repos := followed.pop()) == 1:
        return repos[0]
    shown = {item.report.repo for item in items}
    return shown.pop() if len(shown) == 1 else ""


_UNDATED = datetime.max.replace(tzinfo=UTC)  # sorts after every merge time
_EARLIEST = datetime.min.replace(tzinfo=UTC)
# The sort key is one integer, its parts in bit fields, so that a tick's sorts (a few hundred
# reports for each of thousands of digests) compare integers, not tuples holding datetimes:
# (must-read, impact) above the microseconds since year 1 (under 2**59), above the seq.
_TIME_BITS, _SEQ_BITS = 59, 64


def _importance(report: Report, seq: int) -> int:
    """Sort key: must-read first, then impact high → low, then merge time (undated last),
    then seq (a BigInteger column: under 2**63)."""
    merged = report.merged_at
    if merged is None:
        merged = _UNDATED
    elif merged.tzinfo is None:  # a header's wall-clock time: read it as UTC, one clock for all
        merged = merged.replace(tzinfo=UTC)
    since: timedelta = merged - _EARLIEST
    micros = (since.days * 86_400 + since.seconds) * 1_000_000 + since.microseconds
    must_read = 0 if report.recommendation_level is RecommendationLevel.MUST_READ else 1
    level = must_read * 4 + _IMPACT_RANK[report.impact_level]
    return (((level << _TIME_BITS) | micros) << _SEQ_BITS) | seq


@lru_cache(maxsize=FLAG_KEYS)
def flag_key(flag: str) -> str:
    """What makes two risk flags the same: case, full/half width (NFKC), punctuation and
    spacing do not count ("FP8 例外。" and "fp8例外" are one flag). Remembered: a tick builds a
    few hundred digests over the same reports, each comparing their flags."""
    folded = unicodedata.normalize("NFKC", flag).casefold()
    return "".join(c for c in folded if unicodedata.category(c)[0] not in ("P", "Z", "C"))


def _top_flags(items: Sequence[StoredReport]) -> tuple[tuple[str, int], ...]:
    """Flags that SHARED_FLAG_MIN or more PRs share (compared by `flag_key`, shown as first
    seen), by the number of PRs; ties keep the order first seen. (Counted over each item's
    distinct keys at C pace: a tick rolls up every audience's items, hundreds each.)"""
    counts = Counter(chain.from_iterable(item.flag_set for item in items))
    shared = [key for key, n in counts.items() if n >= SHARED_FLAG_MIN]
    if not shared:
        return ()
    wanted = set(shared)
    shown: dict[str, str] = {}  # the text each shared key was first seen as
    for item in items:
        for key, flag in item.flag_keys:
            if key in wanted:
                shown.setdefault(key, flag)
        if len(shown) == len(wanted):
            break
    pairs = [(shown[key], counts[key]) for key in shared]
    pairs.sort(key=lambda pair: -pair[1])  # stable: first seen first
    return tuple(pairs[:TOP_FLAGS])


def shows_repo(items: Sequence[StoredReport], flt: DigestFilter) -> bool:
    """Whether entries name their repo: items from more than one repo, and a filter that does
    not pin exactly one."""
    if len(flt.repos) == 1:
        return False
    return len(set(map(_REPO_KEY, items))) > 1


def _group_order(tags_in_use: dict[str, list[DigestEntry]], wanted: Sequence[str]) -> list[str]:
    """Channel tags in config order, then other tags by size (ties: first seen), "other" last."""
    first = [tag for tag in wanted if tag in tags_in_use]
    rest = [tag for tag in tags_in_use if tag not in first and tag != OTHER_TAG]
    rest.sort(key=lambda tag: -len(tags_in_use[tag]))
    last = [OTHER_TAG] if OTHER_TAG in tags_in_use and OTHER_TAG not in first else []
    return first + rest + last


# by seq: the subscriptions that chose the report, and when a `now` subscription posted it
EntryNotes = Mapping[int, tuple[tuple[str, ...], str]]


def build_digest(
    items: Sequence[StoredReport],
    flt: DigestFilter,
    title: str,
    notes: EntryNotes | None = None,
    *,
    synthesis: bool = False,
) -> Digest:
    """The tag view of `items` (the output of `select_new`), capped at `flt.max_items`.

    The cap keeps the most important entries (must-read, high impact) across all groups,
    those a `now` subscription already posted here last (their one line refers to a post the
    chat has seen: the budget goes to what it has not); the rollup (`total`, `high_impact`,
    `top_flags`) and the synthesis (when asked) count every item, shown or not.
    """
    reposts = {seq for seq, (_, when) in notes.items() if when} if notes else set()
    if reposts:
        ranked = sorted(items, key=lambda item: (item.seq in reposts, item.rank))
    else:  # (the usual digest: one integer per item to compare)
        ranked = sorted(items, key=_RANK)
    shown = ranked[: max(flt.max_items, 0)]
    wanted = flt.tags
    by_tag: dict[str, list[DigestEntry]] = {}
    for item in shown:
        tag = item.group_tag(wanted)
        matched, posted = notes.get(item.seq, ((), "")) if notes else ((), "")
        by_tag.setdefault(tag, []).append(DigestEntry(item, tag, matched, posted))
    groups = tuple(TagGroup(tag, tuple(by_tag[tag])) for tag in _group_order(by_tag, wanted))
    high = sum(map(_HIGH, items))
    return Digest(
        title=title,
        groups=groups,
        total=len(items),
        shown=len(shown),
        more=len(items) - len(shown),
        budget=max(flt.max_items, 0),
        overflow=tuple(ranked[len(shown) :]),
        high_impact=high,
        top_flags=_top_flags(items),
        show_repo=shows_repo(items, flt),
        synthesis=synthesize([(i.report, i.revision) for i in ranked]) if synthesis else None,
    )
