"""What a person can ask for, one frozen dataclass per verb.

The parser (`bot/chat/commands.py`) turns typed text, a mention or a button into one of these;
`Answerer.answer` matches on the type. Each class holds only what its verb needs, so a handler
never reads a field another verb set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar

from bot.core.models import Section
from bot.core.query import Query, QueryError
from bot.core.reports.refs import PRRef


class Verb(StrEnum):
    PR = "pr"
    FIND = "find"
    TAGS = "tags"
    DIGEST = "digest"
    SUBSCRIBE = "subscribe"
    UNSUBSCRIBE = "unsubscribe"
    SUBSCRIPTIONS = "subscriptions"
    SCHEDULE = "schedule"
    STATUS = "status"
    UNREAD = "unread"
    MORE = "more"
    HELP = "help"
    START = "start"


@dataclass(frozen=True, slots=True)
class TypedQuery:
    """A query as typed: its text (echoed back), and the parsed query or the error line (and
    the error itself, which the chat words in its own language)."""

    text: str
    query: Query | None
    error: str = ""
    problem: QueryError | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class ShowReport:
    """`/pr 7422 risks`, `/risks 7422`, "show risks for #7422", a section button."""

    verb: ClassVar[Verb] = Verb.PR
    ref: PRRef
    section: Section = Section.SUMMARY
    public: bool = False


@dataclass(frozen=True, slots=True)
class Find:
    """`find QUERY`."""

    verb: ClassVar[Verb] = Verb.FIND
    typed: TypedQuery


@dataclass(frozen=True, slots=True)
class Subscribe:
    """`subscribe QUERY [at CADENCE]`: add a subscription ("" cadence: the default)."""

    verb: ClassVar[Verb] = Verb.SUBSCRIBE
    typed: TypedQuery
    cadence: str = ""


@dataclass(frozen=True, slots=True)
class TrySubscribe:
    """`subscribe test QUERY [at CADENCE]`: replay the query over past days, change nothing."""

    verb: ClassVar[Verb] = Verb.SUBSCRIBE
    typed: TypedQuery
    cadence: str = ""


@dataclass(frozen=True, slots=True)
class OpenPicker:
    """`subscribe` alone: Slack's modal, Telegram's keyboard (a typed hint elsewhere)."""

    verb: ClassVar[Verb] = Verb.SUBSCRIBE


@dataclass(frozen=True, slots=True)
class Unsubscribe:
    """`unsubscribe 1 3` by the numbers `subscriptions` shows, or `unsubscribe all`."""

    verb: ClassVar[Verb] = Verb.UNSUBSCRIBE
    numbers: tuple[int, ...] = ()
    everything: bool = False


@dataclass(frozen=True, slots=True)
class SetSchedule:
    """`schedule 09:00 [TZ]` or `schedule "0 9 * * mon-fri" [TZ]` (None: the chat's zone)."""

    verb: ClassVar[Verb] = Verb.SCHEDULE
    cron: str
    timezone: str | None = None


# The verbs that take no argument but `public`.
PLAIN_VERBS = frozenset(
    {
        Verb.TAGS,
        Verb.DIGEST,
        Verb.SUBSCRIPTIONS,
        Verb.STATUS,
        Verb.UNREAD,
        Verb.MORE,
        Verb.HELP,
        Verb.START,
    }
)


@dataclass(frozen=True, slots=True)
class Ask:
    """A verb without arguments: `tags`, `digest`, `subscriptions`, `status`, `unread`, `more`,
    `help`, `start`; `public` posts the answer to the chat instead of the asker alone."""

    verb: Verb
    public: bool = False

    def __post_init__(self) -> None:
        if self.verb not in PLAIN_VERBS:
            raise ValueError(f"{self.verb} takes arguments; it has a request of its own")


Request = (
    ShowReport | Find | Subscribe | TrySubscribe | OpenPicker | Unsubscribe | SetSchedule | Ask
)
