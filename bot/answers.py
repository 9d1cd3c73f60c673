"""Execute an Invocation for a chat: data in, data out. Adapters render the Answer.

Every platform goes through `Answerer.answer`, so `/pr 7422 risks` in Slack, `/risks 7422` in
Telegram and `prdigest pr 7422 risks` agree. Who may change a chat's subscription is decided
here (the adapter supplies how to ask the platform); the wording lives in the labels table.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import date, timedelta

from bot.core.cadence import CadenceError, parse_cadence
from bot.core.clock import Clock
from bot.core.commands import SPECS, Invocation, UsageError, Verb, command_prefix
from bot.core.models import Format, Locale, Platform, Section
from bot.core.render.labels import chat_words, zh_command
from bot.core.render.renderer import RenderedMessage, Renderer
from bot.core.render.results import narrower, result_notice
from bot.core.replay import REPLAY_DAYS, replay
from bot.core.search import search
from bot.core.select import (
    Digest,
    DigestFilter,
    StoredReport,
    build_digest,
    default_title,
    select_new,
)
from bot.core.store.destinations import (
    CONFIG,
    DEFAULT_CHAT_SCHEDULE,
    Destination,
    DestinationStore,
)
from bot.core.store.lookup import AmbiguousRefError, ReportNotFoundError, find_report
from bot.core.store.reports import ReportStore
from bot.core.store.status import UNSUBSCRIBED, collect
from bot.cron import CronError, next_fire
from bot.settings import BotConfig

FIND_LIMIT = 10  # results one chat answer lists; past it, "+N more"
TAGS_WINDOW = timedelta(days=30)
TAGS_SHOWN = 40


@dataclass(frozen=True, slots=True)
class Notice:
    key: str
    params: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SectionAnswer:
    item: StoredReport
    section: Section


@dataclass(frozen=True, slots=True)
class DigestAnswer:
    digest: Digest
    day: date  # the digest's heading date: the day it was asked for


Reply = Notice | SectionAnswer | DigestAnswer


@dataclass(frozen=True, slots=True)
class Answer:
    reply: Reply
    public: bool = False
    announce: Notice | None = None  # told to the whole chat: a subscription changed


@dataclass(frozen=True)
class Chat:
    """Who asks, where. `is_admin` asks the platform only when a command needs it."""

    platform: Platform
    chat_id: str
    user_id: str
    is_admin: Callable[[], Awaitable[bool]]
    locale: Locale  # adapters/base.py chat_at: the destination's, the user's, or config.locale
    user_name: str = ""


def render_notice(
    renderer: Renderer, notice: Notice, fmt: Format, locale: Locale
) -> RenderedMessage:
    """A notice in the words of the platform it is read on: Slack's `{cmd}` is "/pr " and its
    `{chat}` a channel; Telegram's "/" and a chat (群)."""
    platform = Platform.SLACK if fmt is Format.SLACK else None
    params = {**chat_words(platform, locale), **notice.params}
    return renderer.notice(notice.key, fmt, locale, **params)


def render_reply(
    renderer: Renderer, reply: Reply, fmt: Format, locale: Locale
) -> list[RenderedMessage]:
    match reply:
        case Notice():
            return [render_notice(renderer, reply, fmt, locale)]
        case SectionAnswer(item, section):
            return renderer.section(item, section, fmt, locale)
        case DigestAnswer(digest, day):
            return renderer.digest(digest, fmt, locale, date=day)


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


def _filter_summary(flt: DigestFilter) -> str:
    parts = list(flt.tags) or ["*"]
    parts += [f"-{tag}" for tag in flt.exclude_tags]
    parts += [f"repo:{repo}" for repo in flt.repos]
    return " ".join(parts)


Handler = Callable[[Invocation, Chat], Awaitable[Answer]]


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
        # Spelled out, not looked up by name, so grep and mypy see every handler; a test checks
        # that every Verb has one.
        self.handlers: dict[Verb, Handler] = {
            Verb.PR: self._pr,
            Verb.FIND: self._find,
            Verb.TAGS: self._tags,
            Verb.DIGEST: self._digest,
            Verb.SUBSCRIBE: self._subscribe,
            Verb.UNSUBSCRIBE: self._unsubscribe,
            Verb.SUBSCRIPTIONS: self._subscriptions,
            Verb.SCHEDULE: self._schedule,
            Verb.STATUS: self._status,
            Verb.HELP: self._help,
            Verb.START: self._start,
        }

    async def answer(self, inv: Invocation, chat: Chat) -> Answer:
        spec = SPECS.get(inv.verb)
        # A replay changes nothing, so anyone in the chat may ask for one.
        if spec is not None and spec.admin_only and not inv.replay and not await chat.is_admin():
            return Answer(Notice("not_admin"))
        return await self.handlers[inv.verb](inv, chat)

    async def answer_text(self, parse: Callable[[], Invocation], chat: Chat) -> Answer:
        """Parse and answer; bad input becomes a usage notice, never an exception."""
        try:
            inv = parse()
        except UsageError as exc:
            return Answer(Notice(exc.key, dict(exc.params)))
        return await self.answer(inv, chat)

    async def _pr(self, inv: Invocation, chat: Chat) -> Answer:
        assert inv.ref is not None
        try:
            item = await find_report(self.reports, inv.ref)
        except ReportNotFoundError:
            return Answer(Notice("not_found", {"ref": str(inv.ref)}))
        except AmbiguousRefError as exc:
            choices = ", ".join(c.report.ref for c in exc.candidates)
            return Answer(Notice("ambiguous", {"ref": str(inv.ref), "choices": choices}))
        return Answer(SectionAnswer(item, inv.section), public=inv.public)

    async def _find(self, inv: Invocation, chat: Chat) -> Answer:
        if inv.query is None:
            return Answer(Notice("bad_query", {"error": inv.query_error}))
        result = await search(self.reports, inv.query, limit=FIND_LIMIT, now=self.clock())
        example = f"{command_prefix(chat.platform)}find {narrower(inv.query_text)}"
        hits = [hit.report for hit in result.hits]
        key, params = result_notice(
            hits,
            result.total,
            inv.query_text,
            chat.locale,
            command=example,
            capped=result.capped,
        )
        return Answer(Notice(key, params), inv.public)

    async def _tags(self, inv: Invocation, chat: Chat) -> Answer:
        counts = await self.reports.tag_counts(self.clock() - TAGS_WINDOW)
        if not counts:
            return Answer(Notice("no_tags"))
        items = ", ".join(f"{tag} ({n})" for tag, n in counts[:TAGS_SHOWN])
        return Answer(Notice("tags_list", {"items": items}), inv.public)

    async def _own(self, chat: Chat) -> Destination | None:
        return await self.destinations.find(chat.platform, chat.chat_id)

    async def _digest(self, inv: Invocation, chat: Chat) -> Answer:
        dest = await self._own(chat)
        if dest is None or not dest.active:
            return Answer(Notice("no_subscriptions"))
        window = await self.reports.since(dest.watermark)
        digest = build_digest(
            select_new(window, dest.filter, dest.watermark),
            dest.filter,
            default_title(dest.filter, dest.label),
        )
        if digest.is_empty:
            return Answer(Notice("digest_empty"))
        return Answer(DigestAnswer(digest, self.clock().date()), inv.public)

    def _config_managed(self, dest: Destination | None) -> Answer | None:
        if dest is not None and dest.origin == CONFIG:
            return Answer(Notice("config_managed", {"name": dest.name or dest.target}))
        return None

    async def _subscribe(self, inv: Invocation, chat: Chat) -> Answer:
        if inv.replay:
            return await self._replay(inv, chat)
        dest = await self._own(chat)
        if (refused := self._config_managed(dest)) is not None:
            return refused
        old = dest.filter if dest is not None and dest.active else DigestFilter()
        tags = [t for t in old.tags if t not in inv.exclude_tags]
        tags += [t for t in inv.add_tags if t not in tags]
        excludes = [t for t in old.exclude_tags if t not in inv.add_tags]
        excludes += [t for t in inv.exclude_tags if t not in excludes]
        repos = list(dict.fromkeys([*old.repos, *inv.repos]))
        # replace(): whatever else the filter holds (its query, its size) is kept
        flt = replace(old, repos=tuple(repos), tags=tuple(tags), exclude_tags=tuple(excludes))
        saved = await self._save(chat, flt)
        return self._changed("subscribed", saved, chat)

    async def _replay(self, inv: Invocation, chat: Chat) -> Answer:
        """`subscribe test QUERY [at CADENCE]`: what the subscription would have posted over
        the last REPLAY_DAYS days; at the chat's own schedule when no cadence is given."""
        if inv.query is None:
            return Answer(Notice("bad_query", {"error": inv.query_error}))
        dest = await self._own(chat)
        now = self.clock()
        typed = inv.cadence or (dest.schedule if dest is not None else DEFAULT_CHAT_SCHEDULE)
        try:
            cadence = parse_cadence(typed, next_fire=next_fire, now=now)
        except CadenceError as error:
            return Answer(Notice("bad_cadence", {"error": str(error)}))
        tz = dest.timezone if dest is not None else self.config.timezone
        result = await replay(
            self.reports,
            inv.query,
            cadence,
            now=now,
            tz=tz,
            renderer=self.renderer,
            platform=chat.platform,
            locale=chat.locale,
        )
        params = {
            "query": inv.query_text,
            "cadence": cadence.text,
            "days": str(REPLAY_DAYS),
            "matched": str(result.matched),
            "digests": str(result.digests),
            "per_week": f"{result.messages_per_week:.1f}",
            "items": "\n".join(f"{m.repo}#{m.number} {m.title}" for m in result.newest),
        }
        return Answer(Notice("replay" if result.matched else "replay_empty", params))

    async def _save(self, chat: Chat, flt: DigestFilter) -> Destination:
        saved = await self.destinations.save_chat(
            chat.platform, chat.chat_id, flt, timezone=self.config.timezone, locale=chat.locale
        )
        if not saved.active:
            await self.destinations.set_active(saved.id, True)
        return saved

    def _changed(self, key: str, dest: Destination, chat: Chat) -> Answer:
        summary = _filter_summary(dest.filter)
        announce = Notice(
            "subscription_changed", {"user": chat.user_name or chat.user_id, "summary": summary}
        )
        return Answer(Notice(key, {"tags": summary}), announce=announce)

    async def _unsubscribe(self, inv: Invocation, chat: Chat) -> Answer:
        dest = await self._own(chat)
        if (refused := self._config_managed(dest)) is not None:
            return refused
        if dest is None or not dest.active:
            return Answer(Notice("no_subscriptions"))
        remaining = tuple(t for t in dest.filter.tags if t not in inv.add_tags)
        if inv.everything or (not remaining and not dest.filter.repos):
            await self.destinations.set_active(dest.id, False, UNSUBSCRIBED)
            announce = Notice("subscription_stopped", {"user": chat.user_name or chat.user_id})
            return Answer(Notice("all_unsubscribed"), announce=announce)
        saved = await self._save(chat, replace(dest.filter, tags=remaining))
        return self._changed("unsubscribed", saved, chat)

    async def _subscriptions(self, inv: Invocation, chat: Chat) -> Answer:
        dest = await self._own(chat)
        if dest is None or not dest.active:
            return Answer(Notice("no_subscriptions"))
        params = {
            "tags": _filter_summary(dest.filter),
            "schedule": dest.schedule,
            "tz": dest.timezone,
        }
        return Answer(Notice("subscriptions", params), inv.public)

    async def _schedule(self, inv: Invocation, chat: Chat) -> Answer:
        assert inv.schedule is not None
        dest = await self._own(chat)
        if (refused := self._config_managed(dest)) is not None:
            return refused
        if dest is None or not dest.active:
            return Answer(Notice("no_subscriptions"))
        tz = inv.timezone or dest.timezone
        try:
            upcoming = next_fire(inv.schedule, tz, self.clock())
        except CronError as exc:
            return Answer(Notice("bad_schedule", {"reason": str(exc)}))
        await self.destinations.save_chat(
            chat.platform,
            chat.chat_id,
            dest.filter,
            schedule=inv.schedule,
            timezone=tz,
            locale=dest.locale,
        )
        when = upcoming.isoformat(timespec="minutes") if upcoming else "-"
        params = {"cron": inv.schedule, "tz": tz, "next": when}
        announce = Notice("schedule_changed", {"user": chat.user_name or chat.user_id, **params})
        return Answer(Notice("schedule_set", params), announce=announce)

    async def _status(self, inv: Invocation, chat: Chat) -> Answer:
        dest = await self._own(chat)
        if dest is None:
            return Answer(Notice("no_subscriptions"))
        [state] = await collect(self.destinations.engine, [dest])
        params = {
            "state": "active" if state.active else f"off ({state.deactivated_reason})",
            "last": state.last_digest or "-",
            "pending": str(state.pending),
            "failed": str(state.failed),
        }
        return Answer(Notice("status", params), inv.public)

    async def _help(self, inv: Invocation, chat: Chat) -> Answer:
        return Answer(Notice("help", {"commands": help_lines(chat.platform, chat.locale)}))

    async def _start(self, inv: Invocation, chat: Chat) -> Answer:
        return Answer(Notice("welcome", {"commands": help_lines(chat.platform, chat.locale)}))
