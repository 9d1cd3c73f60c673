"""Answer a typed request for a chat: data in, data out. Adapters render the Answer.

Every platform goes through `Answerer.answer`, so `/pr 7422 risks` in Slack, `/risks 7422` in
Telegram and `prdigest pr 7422 risks` agree. Who may change a chat's subscription is decided
here (the adapter supplies how to ask the platform); the wording lives in the labels table.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from bot.chat.commands import SPECS, UsageError, command_prefix
from bot.chat.messages import (
    Answer,
    Chat,
    DigestAnswer,
    Notice,
    Reply,
    SectionAnswer,
    in_private,
)
from bot.chat.reading import ReadingVerbs
from bot.chat.replay import REPLAY_DAYS, replay
from bot.chat.requests import (
    Ask,
    Find,
    OpenPicker,
    Request,
    SetSchedule,
    ShowReport,
    Subscribe,
    TrySubscribe,
    Unsubscribe,
    Verb,
)
from bot.chat.search_gate import SearchBusy, SearchGate
from bot.chat.subscriptions import SubscriptionVerbs, typed_error
from bot.core.clock import Clock
from bot.core.digest.select import (
    DigestFilter,
    build_digest,
    default_title,
    select_new,
)
from bot.core.models import Format, Locale, Platform
from bot.core.query.ast import Query
from bot.core.query.known_tags import bare_words
from bot.core.render.actions import EntryAction
from bot.core.render.labels import chat_words, zh_command
from bot.core.render.renderer import RenderedMessage, Renderer
from bot.core.render.results import narrowings, result_notice, results_message
from bot.core.reports.model import Report
from bot.core.store.finder.search import SearchResult, search
from bot.core.store.lookup import AmbiguousRefError, ReportNotFoundError, find_report
from bot.core.store.reports import ReportStore
from bot.core.store.search.budget import QueryTooComplex, QueryTooSlow
from bot.core.store.search.known import tags_known
from bot.core.store.status import collect
from bot.core.store.subscriptions import SubscriptionStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from bot.settings import BotConfig

__all__ = [
    "Answer",
    "Answerer",
    "Chat",
    "DigestAnswer",
    "FoundReports",
    "Notice",
    "Reply",
    "SectionAnswer",
]

FIND_LIMIT = 10  # results one chat answer lists; past it, "+N more"
NARROWING_TRIES = 3  # narrower queries a "+N more" answer asks the store about, at most
TAGS_WINDOW = timedelta(days=30)
TAGS_SHOWN = 40


@dataclass(frozen=True, slots=True)
class FoundReports(Notice):
    """A search's answer: the notice that words it (its `items`, one line per PR, are what
    plain text shows) and the reports it lists, which Slack and Telegram show linked, each
    with the digest's Full report and Read buttons."""

    reports: tuple[Report, ...] = ()


def render_notice(
    renderer: Renderer, notice: Notice, fmt: Format, locale: Locale
) -> RenderedMessage:
    """A notice in the words of the platform it is read on: Slack's `{cmd}` is "/pr " and its
    `{chat}` a channel; Telegram's "/" and a chat (群); a private chat's words name the person
    (`notice.private`: "your subscriptions"). Found reports are linked where the platform can."""
    platform = Platform.SLACK if fmt is Format.SLACK else None
    params = {**chat_words(platform, locale, private=notice.private), **notice.params}
    if isinstance(notice, FoundReports) and notice.reports:
        found = results_message(renderer, (notice.key, params), notice.reports, fmt, locale)
        if found is not None:
            return found
    return renderer.notice(notice.key, fmt, locale, **params)


def render_reply(
    renderer: Renderer, reply: Reply, fmt: Format, locale: Locale
) -> list[RenderedMessage]:
    match reply:
        case Notice():
            return [render_notice(renderer, reply, fmt, locale)]
        case SectionAnswer(item, _, True):
            return renderer.report_pages(item, fmt, locale)
        case SectionAnswer(item, section):
            return renderer.section(item, section, fmt, locale)
        case DigestAnswer(digest, day, None):
            return renderer.digest(digest, fmt, locale, date=day)
        case DigestAnswer(digest, day, options):
            parts = renderer.digest_parts(digest, fmt, locale, date=day, options=options)
            return [message for part in parts for message in part.messages]


def help_lines(platform: Platform, locale: Locale) -> str:
    """One line per command, in the chat's language and its platform's syntax: Slack's
    commands are words after "/pr" (subcommands), Telegram's start with "/"."""
    prefix = command_prefix(platform)
    lines = []
    for spec in SPECS.values():
        if Locale(locale) is Locale.ZH:
            usage, description = zh_command(spec.verb.value)
        else:
            usage, description = spec.usage, spec.description
        name = "" if spec.verb is Verb.PR and prefix.strip() == "/pr" else f"{spec.verb.value} "
        lines.append(f"{prefix}{name}{usage}".rstrip() + f" — {description}")
    return "\n".join(lines)


PlainHandler = Callable[[Ask, Chat], Awaitable[Answer]]


def query_refusal(error: QueryTooSlow | QueryTooComplex | SearchBusy, seconds: float) -> Notice:
    """What a chat is told when its query is refused: too slow or too complex (narrow it), or
    too many searches running (try again); never that the database cannot be reached."""
    if isinstance(error, QueryTooSlow):
        return Notice("query_too_slow", {"seconds": f"{seconds:g}"})
    if isinstance(error, QueryTooComplex):
        return Notice("query_too_complex", {"reason": str(error)})
    return Notice("search_busy" if error.everyone else "search_busy_you")


class Answerer:
    def __init__(
        self,
        reports: ReportStore,
        destinations: DestinationStore,
        config: BotConfig,
        *,
        clock: Clock,
        renderer: Renderer | None = None,
    ) -> None:
        self.reports = reports
        self.destinations = destinations
        self.config = config
        self.clock = clock
        self.renderer = renderer or Renderer()  # a replay renders what it counts
        subscriptions = SubscriptionStore(destinations.engine, clock)
        # Every search, replay and `subscribe` check of this process passes the one gate.
        self.gate = SearchGate(config.search.max_concurrent, config.search.max_per_user)
        self.verbs = SubscriptionVerbs(subscriptions, config, clock, reports, gate=self.gate)
        self.reading = ReadingVerbs(destinations.engine, destinations, reports, config, clock)
        # Spelled out, not looked up by name, so grep and mypy see every handler; a test checks
        # that every plain verb has one.
        self.plain: dict[Verb, PlainHandler] = {
            Verb.TAGS: self._tags,
            Verb.DIGEST: self._digest,
            Verb.SUBSCRIPTIONS: self.verbs.list,
            Verb.STATUS: self._status,
            Verb.UNREAD: self._unread,
            Verb.MORE: self._more,
            Verb.HELP: self._help,
            Verb.START: self._start,
        }

    async def answer(self, request: Request, chat: Chat) -> Answer:
        spec = SPECS.get(request.verb)
        # A replay changes nothing, so anyone in the chat may ask for one.
        # In a DM or a private chat the person owns their subscriptions.
        may_change = isinstance(request, TrySubscribe) or chat.private
        if spec is not None and spec.admin_only and not may_change and not await chat.is_admin():
            return Answer(Notice("not_admin"))
        try:
            return in_private(await self._dispatch(request, chat), chat)
        except (QueryTooSlow, QueryTooComplex, SearchBusy) as refused:
            return Answer(query_refusal(refused, self.config.search.timeout_seconds))

    async def _dispatch(self, request: Request, chat: Chat) -> Answer:
        match request:
            case ShowReport():
                return await self._pr(request)
            case Find():
                return await self._find(request, chat)
            case Subscribe() | OpenPicker():
                return await self.verbs.subscribe(request, chat)
            case TrySubscribe():
                return await self._replay(request, chat)
            case Unsubscribe():
                return await self.verbs.unsubscribe(request, chat)
            case SetSchedule():
                return await self.verbs.schedule(request, chat)
            case Ask():
                return await self.plain[request.verb](request, chat)

    async def answer_text(self, parse: Callable[[], Request], chat: Chat) -> Answer:
        """Parse and answer; bad input becomes a usage notice, never an exception."""
        try:
            request = parse()
        except UsageError as exc:
            return in_private(Answer(Notice(exc.key, dict(exc.params))), chat)
        return await self.answer(request, chat)

    async def _pr(self, request: ShowReport) -> Answer:
        try:
            item = await find_report(self.reports, request.ref)
        except ReportNotFoundError:
            return Answer(Notice("not_found", {"ref": str(request.ref)}))
        except AmbiguousRefError as exc:
            choices = ", ".join(c.report.ref for c in exc.candidates)
            return Answer(Notice("ambiguous", {"ref": str(request.ref), "choices": choices}))
        return Answer(SectionAnswer(item, request.section), public=request.public)

    async def _find(self, request: Find, chat: Chat) -> Answer:
        typed = request.typed
        if typed.query is None:
            return Answer(Notice("bad_query", {"error": typed_error(typed, chat.locale)}))
        async with self.gate.admit(chat.user_id):
            result = await search(
                self.reports,
                typed.query,
                limit=FIND_LIMIT,
                now=self.clock(),
                seconds=self.config.search.timeout_seconds,
            )
            narrowed = await self._narrowed(typed.query, typed.text, result)
        example = f"{command_prefix(chat.platform)}find {narrowed}" if narrowed else None
        hits = [hit.report for hit in result.hits]
        words = bare_words(typed.query)  # searched as text; said when they are tags too
        tags = await tags_known(self.reports.engine, words) if words else set()
        key, params = result_notice(
            hits,
            result.total,
            typed.text,
            chat.locale,
            command=example,
            capped=result.capped,
            tags=[word for word in words if word in tags],
        )
        return Answer(FoundReports(key, params, reports=tuple(hits)))

    async def _narrowed(self, query: Query, text: str, result: SearchResult) -> str | None:
        """A narrower query to suggest past "+N more", as written: the first candidate the
        store says matches some of the reports but fewer than `result` (a count that stopped
        at the window proves nothing). At most NARROWING_TRIES are asked, all within one
        search budget; None when none narrows, or there is nothing more to narrow."""
        if result.more <= 0:
            return None
        budget = self.config.search.timeout_seconds
        ends = time.monotonic() + budget
        for candidate, parsed in narrowings(query, text)[:NARROWING_TRIES]:
            left = ends - time.monotonic()
            if left <= 0:
                return None
            try:
                found = await search(self.reports, parsed, limit=0, now=self.clock(), seconds=left)
            except (QueryTooSlow, QueryTooComplex):  # the answer stands, without an example
                return None
            fewer = result.capped or found.total < result.total
            if found.total > 0 and not found.capped and fewer:
                return candidate
        return None

    async def _tags(self, request: Ask, chat: Chat) -> Answer:
        counts = await self.reports.tag_counts(self.clock() - TAGS_WINDOW)
        if not counts:
            return Answer(Notice("no_tags"))
        items = ", ".join(f"{tag} ({n})" for tag, n in counts[:TAGS_SHOWN])
        return Answer(Notice("tags_list", {"items": items}), request.public)

    async def _digest(self, request: Ask, chat: Chat) -> Answer:
        """The chat's next digest, now: what its subscriptions would post (each PR once)."""
        subs = [s for s in await self.verbs.mine(chat) if s.active]
        if not subs:
            return Answer(Notice("no_subscriptions"))
        start = min(sub.watermark for sub in subs)
        window = await self.reports.since(start)
        chosen = {
            item.seq: item for sub in subs for item in select_new(window, sub.filter, sub.watermark)
        }
        flt = (
            subs[0].filter
            if len(subs) == 1
            else DigestFilter(max_items=max(s.filter.max_items for s in subs))
        )
        named = [sub.title for sub in subs if sub.title]
        title = named[0] if named else default_title([s.filter for s in subs], chosen.values())
        digest = build_digest(sorted(chosen.values(), key=lambda item: item.seq), flt, title)
        if digest.is_empty:
            return Answer(Notice("digest_empty"))
        return Answer(DigestAnswer(digest, self.clock().date()), request.public)

    async def _replay(self, request: TrySubscribe, chat: Chat) -> Answer:
        """`subscribe test QUERY [at CADENCE]`: what the subscription would have posted over
        the last REPLAY_DAYS days; at the default chat schedule when no cadence is given."""
        query = request.typed.query
        if query is None:
            return Answer(Notice("bad_query", {"error": typed_error(request.typed, chat.locale)}))
        now = self.clock()
        typed = self.verbs.cadence(
            request.cadence, await self.verbs.mine(chat), now, locale=chat.locale
        )
        if isinstance(typed, Answer):
            return typed
        cadence, tz = typed
        async with self.gate.admit(chat.user_id):
            result = await replay(
                self.reports,
                query,
                cadence,
                now=now,
                tz=tz,
                renderer=self.renderer,
                platform=chat.platform,
                locale=chat.locale,
                seconds=self.config.search.timeout_seconds,
            )
        params = {
            "query": request.typed.text,
            "cadence": cadence.text,
            "days": str(REPLAY_DAYS),
            "matched": str(result.matched),
            "digests": str(result.digests),
            "per_week": f"{result.messages_per_week:.1f}",
            "items": "\n".join(f"{m.repo}#{m.number} {m.title}" for m in result.newest),
        }
        return Answer(Notice("replay" if result.matched else "replay_empty", params))

    async def _status(self, request: Ask, chat: Chat) -> Answer:
        subs = await self.verbs.mine(chat)
        if not subs:
            return Answer(Notice("no_subscriptions"))
        states = await collect(self.destinations.engine, subs)
        state = states[0]
        lasts = [s.last_digest for s in states if s.last_digest]
        params = {
            "state": "active" if state.active else f"off ({state.deactivated_reason})",
            "last": max(lasts) if lasts else "-",
            "pending": str(state.pending),
            "failed": str(state.failed),
        }
        return Answer(Notice("status", params), request.public)

    async def _unread(self, request: Ask, chat: Chat) -> Answer:
        return await self.reading.unread(chat)

    async def _more(self, request: Ask, chat: Chat) -> Answer:
        return await self.reading.more(chat)

    async def answer_action(self, action: EntryAction, argument: str, chat: Chat) -> Answer:
        """A digest button (Read, Snooze, Mute, Full report, "+N more") pressed in `chat`."""
        return in_private(await self.reading.act(action, argument, chat), chat)

    async def _help(self, request: Ask, chat: Chat) -> Answer:
        return Answer(Notice("help", {"commands": help_lines(chat.platform, chat.locale)}))

    async def _start(self, request: Ask, chat: Chat) -> Answer:
        return Answer(Notice("welcome", {"commands": help_lines(chat.platform, chat.locale)}))
