"""The subscription verbs of a chat: `subscribe QUERY [at CADENCE]`, `subscriptions`,
`unsubscribe N|all`, `schedule`, the same on every platform.

In channels and groups only admins change subscriptions (answers.Answerer checks); in a DM or a
private chat the person owns theirs. Every change is announced in the chat and kept in the
audit table (store/subscriptions.py); a destination whose config channel says `locked: true`
refuses changes from the chat, and a config subscription is changed in the config.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from datetime import datetime

from bot.chat.commands import command_prefix
from bot.chat.messages import Answer, Chat, Notice
from bot.chat.replay import REPLAY_DAYS
from bot.chat.requests import Ask, OpenPicker, SetSchedule, Subscribe, TypedQuery, Unsubscribe
from bot.chat.search_gate import SearchGate
from bot.core.calendar import WorkingCalendar
from bot.core.clock import Clock, human_time
from bot.core.digest.select import DigestFilter
from bot.core.models import Locale, Origin, Platform
from bot.core.query import And, Field, Query, parse, unparse
from bot.core.query.known_tags import bare_words, read_known_tags, tag_terms
from bot.core.render.labels import (
    chat_words,
    error_text,
    labels,
    notice_text,
    slack_mention,
)
from bot.core.store.finder.search import search
from bot.core.store.reports import ReportStore
from bot.core.store.runs import last_posted_time
from bot.core.store.search.known import known_tag_words, read_bare_tags
from bot.core.store.subscriptions import (
    DEFAULT_CHAT_SCHEDULE,
    NOW,
    NewSubscription,
    Subscription,
    SubscriptionStore,
)
from bot.core.store.subscriptions.limits import SubscriptionLimitReached, SubscriptionLimits
from bot.core.timing.cadence import Cadence, CadenceError, parse_cadence
from bot.core.timing.cron import CronError, next_fire, next_real_fire
from bot.settings import BotConfig

PICKER = "picker"  # the answer to `subscribe` alone, for whoever may subscribe here
NAME_CHARS = 100  # a chat subscription is named by its query, cut to this
RECENT_DAYS = REPLAY_DAYS  # a new subscription's answer says what it would have matched


def actor(chat: Chat) -> str:
    return chat.user_name or chat.user_id


def next_text(
    schedule: str,
    tz: str,
    now: datetime,
    calendar: WorkingCalendar | None = None,
    *,
    note: bool = False,
) -> str:
    """When it next posts: a time (its next fire on the calendar's working time; with `note`,
    followed by the holidays it skips, for the CLI); `now` (as PRs arrive); "-" when it never
    fires, or never on working time."""
    if schedule == NOW:
        return NOW
    try:
        found = next_real_fire(schedule, tz, now, calendar)
    except CronError:
        return "-"
    if found is None:
        return "-"
    shown = human_time(found.at, tz)  # in the subscription's own zone, as its chat reads it
    return f"{shown} {found.note}" if note and found.note else shown


class SubscriptionVerbs:
    def __init__(
        self,
        store: SubscriptionStore,
        config: BotConfig,
        clock: Clock,
        reports: ReportStore | None = None,  # `subscribe` says what it would have matched
        *,
        notes: bool = False,  # next times say which holidays they skip (the CLI's list)
        gate: SearchGate | None = None,  # the chats' bound on searches at once (chat/answers.py)
    ) -> None:
        self.store = store
        self.reports = reports
        self.config = config
        self.clock = clock
        self.calendars = config.calendars()
        caps = config.subscription_limits
        self.limits = SubscriptionLimits(caps.per_destination, caps.per_person)
        self.notes = notes
        self.gate = gate

    def next_post(self, sub: Subscription, now: datetime) -> str:
        """When the subscription next posts, on its destination's working calendar."""
        return self._next(sub, now)

    def _next(self, sub: Subscription, now: datetime) -> str:
        calendar = self.calendars.for_subscription(sub)
        return next_text(sub.schedule, sub.timezone, now, calendar, note=self.notes)

    async def recent(self, query: Query, now: datetime, user: str) -> str:
        """How many stored PRs of the last RECENT_DAYS days the query matches ("1000+" past
        the search window): a subscription that would match nothing is seen at once. Within
        the search budget: QueryTooSlow/QueryTooComplex/SearchBusy when it is refused."""
        if self.reports is None:
            return "-"
        recent = And((query, Field("since", ":", f"{RECENT_DAYS}d")))
        admitted: AbstractAsyncContextManager[None] = (
            nullcontext() if self.gate is None else self.gate.admit(user)
        )
        async with admitted:
            result = await search(
                self.reports, recent, limit=0, now=now, seconds=self.config.search.timeout_seconds
            )
        return f"{result.total}+" if result.capped else str(result.total)

    def cadence(
        self, typed: str, subs: list[Subscription], now: datetime, *, locale: Locale = Locale.EN
    ) -> tuple[Cadence, str] | Answer:
        """The cadence typed after `at` (the default chat schedule if none) and the zone it
        runs in (the chat's, else the config's); a bad cadence is the answer, in `locale`."""
        try:
            cadence = parse_cadence(typed or DEFAULT_CHAT_SCHEDULE, next_fire=next_fire, now=now)
        except CadenceError as error:
            return Answer(Notice("bad_cadence", {"error": error_text(error, locale)}))
        return cadence, subs[0].timezone if subs else self.config.timezone

    async def mine(self, chat: Chat) -> list[Subscription]:
        """The chat's subscriptions; in a private chat, its owner's and the chat's own."""
        return await self.store.of(chat.platform, chat.chat_id)

    def _locked(self, subs: list[Subscription]) -> Answer | None:
        locked = next((s for s in subs if s.locked), None)
        if locked is None:
            return None
        return Answer(Notice("locked", {"name": locked.name}))

    async def subscribe(self, request: Subscribe | OpenPicker, chat: Chat) -> Answer:
        subs = await self.mine(chat)
        if (refused := self._locked(subs)) is not None:
            return refused
        if isinstance(request, OpenPicker):  # the platform's picker opens (a hint elsewhere)
            return Answer(Notice(PICKER))
        if request.typed.query is None:
            return Answer(Notice("bad_query", {"error": typed_error(request.typed, chat.locale)}))
        now = self.clock()
        typed = self.cadence(request.cadence, subs, now, locale=chat.locale)
        if isinstance(typed, Answer):
            return typed
        return await self._add(request.typed.query, request.typed.text, typed, chat)

    async def _add(
        self, asked: Query, asked_text: str, when: tuple[Cadence, str], chat: Chat
    ) -> Answer:
        """Add the subscription (its bare words that name tags read as tags) and say so."""
        now = self.clock()
        cadence, tz = when
        query = await self.read_tags(asked)
        text = asked_text if query == asked else unparse(query)
        # The query runs once before anything is saved: one the budget refuses saves nothing.
        recent = {
            "days": str(RECENT_DAYS),
            "recent": await self.recent(query, now, chat.user_id),
        }
        new = NewSubscription(
            name=text[:NAME_CHARS],
            filter=DigestFilter(query=text),
            schedule=cadence.cron or NOW,
            cadence=cadence.text,
            timezone=tz,
            locale=chat.locale,
            owner=chat.user_id if chat.private else None,
            actor=actor(chat),
        )
        try:
            sub = await self.store.add(chat.platform, chat.chat_id, new, self.limits)
        except SubscriptionLimitReached as full:
            return Answer(Notice(f"subscription_limit_{full.scope}", {"limit": str(full.limit)}))
        params = {
            "number": str(sub.number),
            "query": text,
            "cadence": sub.cadence,
            "next": self._next(sub, now),
        }
        announce = _announce(chat, "added", params)
        if query == asked:
            return Answer(Notice("subscribed", {**params, **recent}), announce=announce)
        words = _read_as_tags(asked, query)
        reading = {"words": ", ".join(words), "example": f'"{words[0]}"'}
        answer = Notice("subscribed_as_tags", {**params, **recent, **reading})
        return Answer(answer, announce=announce)

    async def read_tags(self, query: Query) -> Query:
        """`query` with its unquoted bare words that name a known tag (one a stored report
        carries, or one a tag rule gives) read as `tag:WORD`."""
        engine = None if self.reports is None else self.reports.engine
        return await read_bare_tags(engine, query, self.config.rule_tags())

    async def unsubscribe(self, request: Unsubscribe, chat: Chat) -> Answer:
        subs = await self.mine(chat)
        if (refused := self._locked(subs)) is not None:
            return refused
        if not subs:
            return Answer(Notice("no_subscriptions"))
        numbers = None if request.everything else list(request.numbers)
        if numbers is not None:
            known = {s.number: s for s in subs}
            missing = [str(n) for n in numbers if n not in known]
            if missing:
                return Answer(Notice("unknown_subscription", {"numbers": ", ".join(missing)}))
            config = [known[n] for n in numbers if known[n].origin is Origin.CONFIG]
            if config:
                return Answer(Notice("config_managed", {"name": config[0].name}))
        gone = await self.store.remove(subs[0].destination_id, numbers, actor(chat))
        if not gone:
            return Answer(Notice("config_managed", {"name": subs[0].name}))
        items = ", ".join(f"{s.number}. {s.name}" for s in gone)
        params = {"items": items}
        return Answer(Notice("unsubscribed", params), announce=_announce(chat, "removed", params))

    async def list(self, request: Ask, chat: Chat) -> Answer:
        subs = await self.mine(chat)
        if not subs:
            return Answer(Notice("no_subscriptions"))
        now = self.clock()
        lines = []
        words = labels(chat.locale)
        for sub in subs:
            last = await last_posted_time(self.store.engine, sub.id)
            params = {
                "number": str(sub.number),
                "query": _config_filter(sub),
                "cadence": sub.cadence,
                "next": self._next(sub, now),
                "last": human_time(last, sub.timezone) if last else words["not_yet"],
                "owner": _owner(sub, chat),
            }
            lines.append(notice_text("subscription_line", chat.locale, params))
        lines += await self._tag_hints(subs, chat)
        return Answer(Notice("subscriptions", {"items": "\n".join(lines)}), request.public)

    async def _tag_hints(self, subs: Sequence[Subscription], chat: Chat) -> Sequence[str]:
        """For each chat subscription stored with bare words that now name known tags (it
        keeps matching the text): which words, and the commands that make it mean the tags.
        The store is asked once for every subscription's words."""
        stored = {
            sub.id: parse(sub.filter.query, max_terms=None)
            for sub in subs
            if sub.origin is not Origin.CONFIG and sub.filter.query
        }
        words = {word for query in stored.values() for word in bare_words(query)}
        engine = None if self.reports is None else self.reports.engine
        known = await known_tag_words(engine, words, self.config.rule_tags())
        return [
            _tag_hint(sub, stored[sub.id], known, chat)
            for sub in subs
            if sub.id in stored and not known.isdisjoint(bare_words(stored[sub.id]))
        ]

    async def schedule(self, request: SetSchedule, chat: Chat) -> Answer:
        """`schedule 09:00 [TZ]`: when the chat's own subscriptions post (a person's, in a
        private chat); `now` ones keep posting as PRs arrive."""
        subs = await self.mine(chat)
        if (refused := self._locked(subs)) is not None:
            return refused
        own = [s for s in subs if s.origin is not Origin.CONFIG and not s.instant]
        if not subs:
            return Answer(Notice("no_subscriptions"))
        if not own:
            return Answer(Notice("schedule_none_own", {"items": _unschedulable(subs, chat)}))
        tz = request.timezone or own[0].timezone
        calendar = self.calendars.for_destination(chat.platform, chat.chat_id, tz)
        try:
            found = next_real_fire(request.cron, tz, self.clock(), calendar)
        except CronError as exc:
            return Answer(Notice("bad_schedule", {"reason": error_text(exc, chat.locale)}))
        await self.store.set_schedule([s.id for s in own], request.cron, tz, actor(chat))
        upcoming = found.at.isoformat(timespec="minutes") if found is not None else "-"
        params = {"cron": request.cron, "tz": tz, "next": upcoming}
        changed = (
            None if chat.private else Notice("schedule_changed", {"user": actor(chat), **params})
        )
        return Answer(Notice("schedule_set", params), announce=changed)


def _announce(chat: Chat, what: str, params: dict[str, str]) -> Notice | None:
    """Told to the whole chat; a private chat has nobody else to tell."""
    if chat.private:
        return None
    return Notice(f"subscription_{what}", {"user": actor(chat), **params})


def _tag_hint(sub: Subscription, stored: Query, known: set[str], chat: Chat) -> str:
    """The hint for one subscription whose stored bare words include known tags."""
    read = read_known_tags(stored, known)
    params = {
        "number": str(sub.number),
        "words": ", ".join(_read_as_tags(stored, read)),
        "query": unparse(read),
        "cadence": sub.cadence,
        "cmd": command_prefix(chat.platform),
    }
    return notice_text("subscription_bare_tags", chat.locale, {**_words(chat), **params})


def _read_as_tags(written: Query, read: Query) -> list[str]:
    """The words `read` takes as tags that `written` did not (read_bare_tags), in order."""
    asked = tag_terms(written)
    return list(dict.fromkeys(term.value for term in tag_terms(read) if term not in asked))


def _config_filter(sub: Subscription) -> str:
    """What the subscription keeps, as the one query a digest evaluates: a config channel's
    repos, tags (any of them), excluded tags and query, a chat subscription's query."""
    return sub.filter.listed_query()


def _words(chat: Chat) -> dict[str, str]:
    """The chat's words for a notice line built here (`{cmd}`, `{chat}`, `{whose}`...)."""
    return chat_words(chat.platform, chat.locale, private=chat.private)


def _owner(sub: Subscription, chat: Chat) -> str:
    """Whose the subscription is: the config's, the chat's, or a person's, who is "you" to
    themselves, a mention on Slack, their name when it is known and otherwise their id (a
    notice is plain text, so a Telegram link to the person cannot be made). The CLI asks as
    nobody (no user id): it shows the id."""
    words = _words(chat)
    if sub.origin is Origin.CONFIG:
        return notice_text("owner_config", chat.locale, {**words, "name": sub.name})
    if not sub.owner:
        return notice_text("owner_chat", chat.locale, words)
    if chat.user_id and sub.owner == chat.user_id:
        if chat.private:
            return notice_text("owner_you", chat.locale, words)
        if chat.user_name:
            return notice_text("owner_user", chat.locale, {**words, "user": chat.user_name})
    if chat.user_id and chat.platform is Platform.SLACK:
        return notice_text("owner_user", chat.locale, {**words, "user": slack_mention(sub.owner)})
    return notice_text("owner_person", chat.locale, {**words, "user": sub.owner})


def _unschedulable(subs: Sequence[Subscription], chat: Chat) -> str:
    """One line per subscription that no schedule applies to, and why: the config's, or
    posted as PRs arrive (`now`)."""
    lines = []
    for sub in subs:
        key = "schedule_skip_config" if sub.origin is Origin.CONFIG else "schedule_skip_now"
        params = {**_words(chat), "number": str(sub.number), "name": sub.name}
        lines.append(notice_text(key, chat.locale, params))
    return "\n".join(lines)


def typed_error(typed: TypedQuery, locale: Locale) -> str:
    """What is wrong with a query that did not parse, in `locale`."""
    return typed.error if typed.problem is None else error_text(typed.problem, locale)
