"""What a digest's buttons and the reading commands do in a chat: data in, data out.

Read, Snooze, Mute and "+N more" come from a digest posted in the chat (the destination is
the chat the button was pressed in); `/pr unread` lists what is unread there. Anyone in the
chat may mark a PR read or snooze it; muting a tag follows the chat's admin rule (the one
subscriptions follow). The wording lives in the labels table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.chat.messages import Answer, Chat, DigestAnswer, Notice, SectionAnswer
from bot.core.clock import Clock
from bot.core.delivery.reading import ReadingPolicy
from bot.core.digest.select import DigestFilter, StoredReport, build_digest, default_title
from bot.core.models import Section
from bot.core.render.actions import KEY_MAX, ROW_MAX, EntryAction, ascii_number
from bot.core.render.labels import notice_text
from bot.core.render.options import DigestOptions
from bot.core.reports.refs import BadRefError, parse_ref
from bot.core.store.lookup import AmbiguousRefError, ReportNotFoundError, find_report
from bot.core.store.readers import SentDigest, put_read, readers_in, sent_digest
from bot.core.store.reading import (
    Mark,
    MarkKind,
    Page,
    item_key,
    marks_at,
    put_mark,
    reports_by_key,
    shown_must_reads,
    take_page,
)
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import SubscriptionStore
from bot.core.store.subscriptions.destination_store import Destination, DestinationStore
from bot.settings import BotConfig

DATE_FORMAT = "%Y-%m-%d"


def reading_policy(config: BotConfig) -> ReadingPolicy:
    """The planner's reading settings: `reading.unread_days`, and each channel's own."""
    by_target = {
        f"{channel.platform.value}:{channel.target}": channel.unread_days
        for channel in config.channels
        if channel.unread_days is not None
    }
    return ReadingPolicy(config.reading.unread_days, by_target)


class ReadingVerbs:
    def __init__(
        self,
        engine: AsyncEngine,
        destinations: DestinationStore,
        reports: ReportStore,
        config: BotConfig,
        clock: Clock,
    ) -> None:
        self.engine = engine
        self.destinations = destinations
        self.reports = reports
        self.config = config
        self.clock = clock
        self.policy = reading_policy(config)
        self.subscriptions = SubscriptionStore(engine, clock)

    async def act(self, action: EntryAction, argument: str, chat: Chat) -> Answer:
        """A digest button pressed in `chat`."""
        match action:
            case EntryAction.MORE:
                key = ascii_number(argument, KEY_MAX)
                if not key:
                    return Answer(Notice("more_none"))
                return await self.more(chat, key)
            case EntryAction.MUTE:
                return await self.mute(argument, chat)
            # A keyboard opens the menu in the adapter; "mark all read" is `read_all`.
            case EntryAction.MENU | EntryAction.READALL:
                return Answer(Notice("unknown_command", {"command": action.value}))
        found = await self.find_report(argument)
        if isinstance(found, Notice):
            return Answer(found)
        if action is EntryAction.REPORT:
            return Answer(SectionAnswer(found, Section.FULL, by_section=True))
        if action is EntryAction.READ:  # the chat hears of a PR's first read only
            read = await self._read_found(found, chat, "")
            return Answer(read.told, public=read.line is not None)
        return await self.snooze(found, chat)

    async def find_report(self, text: str) -> StoredReport | Notice:
        try:
            return await find_report(self.reports, parse_ref(text))
        except BadRefError:
            return Notice("bad_ref", {"ref": text[:80]})
        except ReportNotFoundError:
            return Notice("not_found", {"ref": text[:80]})
        except AmbiguousRefError as exc:
            choices = ", ".join(c.report.ref for c in exc.candidates)
            return Notice("ambiguous", {"ref": text[:80], "choices": choices})

    async def _here(self, chat: Chat) -> Destination | None:
        return await self.destinations.find(chat.platform, chat.chat_id)

    def _until(self, days: int) -> tuple[datetime, str]:
        until = self.clock() + timedelta(days=days)
        return until, until.astimezone(ZoneInfo(self.config.timezone)).strftime(DATE_FORMAT)

    async def snooze(self, item: StoredReport, chat: Chat) -> Answer:
        """The PR leaves this chat's digests for `reading.snooze_days`."""
        dest = await self._here(chat)
        if dest is None:
            return Answer(Notice("no_digest_here"))
        user = chat.user_name or chat.user_id
        until, shown = self._until(self.config.reading.snooze_days)
        mark = Mark(MarkKind.SNOOZE, item_key(item), user, self.clock(), until)
        await put_mark(self.engine, dest.id, mark)
        params = {"ref": item.report.ref, "user": user, "until": shown}
        return Answer(Notice("snoozed", params), public=True)

    async def mute(self, tag: str, chat: Chat) -> Answer:
        """A tag leaves this chat's digests for `reading.mute_days`: admins only."""
        dest = await self._here(chat)
        if dest is None:
            return Answer(Notice("no_digest_here"))
        if not chat.private and not await chat.is_admin():
            return Answer(Notice("mute_not_admin"))
        user = chat.user_name or chat.user_id
        until, shown = self._until(self.config.reading.mute_days)
        await put_mark(self.engine, dest.id, Mark(MarkKind.MUTE, tag, user, self.clock(), until))
        params = {"tag": tag[:64], "user": user, "until": shown}
        return Answer(Notice("muted", params), public=True)

    async def read(self, argument: str, chat: Chat, external_id: str) -> ReadOutcome:
        """✅ Read pressed on the message `external_id` (a digest's, or any other message
        carrying the button): the PR is read here, by one more reader after the first."""
        found = await self.find_report(argument)
        if isinstance(found, Notice):
            return ReadOutcome(found)
        return await self._read_found(found, chat, external_id)

    async def _read_found(self, item: StoredReport, chat: Chat, external_id: str) -> ReadOutcome:
        dest = await self._here(chat)
        if dest is None:
            return ReadOutcome(Notice("no_digest_here"))
        key, user = item_key(item), chat.user_name or chat.user_id
        first, names = await put_read(self.engine, dest.id, key, user, self.clock())
        told = Notice("marked_read", {"ref": item.report.ref, "user": ", ".join(names)})
        sent = None
        if external_id:
            sent = await sent_digest(self.engine, chat.platform, chat.chat_id, external_id)
        message = await self._read_message(dest.id, sent)
        if first:
            return ReadOutcome(told, (key,), told, message=message)
        return ReadOutcome(told, again=((key, told),), message=message)

    async def message_shown(self, chat: Chat, external_id: str) -> ReadMessage | None:
        """The digest message `external_id` of this chat, with who read its PRs here."""
        dest = await self._here(chat)
        if dest is None:
            return None
        sent = await sent_digest(self.engine, chat.platform, chat.chat_id, external_id)
        return await self._read_message(dest.id, sent)

    async def read_all(self, chat: Chat, key: str) -> ReadOutcome:
        """Every PR of this chat's digest message `key` (its outbox row: what a ✅ reaction's
        "mark all read" carries) is read here; the chat hears of those read for the first time."""
        row = ascii_number(key, ROW_MAX)
        dest = await self._here(chat)
        if dest is None or not row:
            return ReadOutcome(Notice("no_digest_here"))
        sent = await sent_digest(self.engine, chat.platform, chat.chat_id, row=row)
        if sent is None or not sent.keys:
            return ReadOutcome(Notice("no_digest_here"))
        user, first, again = chat.user_name or chat.user_id, [], []
        for pr in sent.keys:
            new, names = await put_read(self.engine, dest.id, pr, user, self.clock())
            if new:
                first.append(pr)
            else:
                again.append((pr, Notice("marked_read", {"ref": pr, "user": ", ".join(names)})))
        line = Notice("reaction_read", {"refs": ", ".join(first), "user": user}) if first else None
        told = Notice("read_all_done", {"n": str(len(sent.keys))})
        message = await self._read_message(dest.id, sent)
        return ReadOutcome(told, tuple(first), line, tuple(again), message)

    async def _read_message(self, dest_id: int, sent: SentDigest | None) -> ReadMessage | None:
        if sent is None:
            return None
        readers = await readers_in(self.engine, dest_id, sent.keys)
        return ReadMessage(sent.row, sent.external_id, sent.payload, tuple(sent.keys), readers)

    async def unread(self, chat: Chat) -> Answer:
        """The must-read PRs shown here that nobody marked read, with the days they have left."""
        dest = await self._here(chat)
        if dest is None:
            return Answer(Notice("no_digest_here"))
        now = self.clock()
        days = self.policy.days_at(chat.platform.value, chat.chat_id)
        async with self.engine.connect() as conn:
            shown = await shown_must_reads(conn, dest.id, now - timedelta(days=days))
            marks = await marks_at(conn, dest.id, now)
            stored = await reports_by_key(conn, [(pr.repo, pr.number) for pr in shown])
        zone = ZoneInfo(self.config.timezone)
        lines = []
        for pr in shown:
            item = stored.get(pr.key)
            if pr.key in marks.read or item is None or marks.quiet(item):
                continue
            left = max(1, (pr.first + timedelta(days=days) - now).days + 1)
            params = {
                "ref": item.report.ref,
                "title": item.report.title,
                "first": pr.first.astimezone(zone).strftime(DATE_FORMAT),
                "left": str(left),
            }
            lines.append(notice_text("unread_line", chat.locale, params))
        if not lines:
            return Answer(Notice("unread_none", {"days": str(days)}))
        return Answer(Notice("unread_list", {"n": str(len(lines)), "items": "\n".join(lines)}))

    async def more(self, chat: Chat, key: int | None = None) -> Answer:
        """The next page of the chat's latest digest with entries left (or of the digest whose
        button carries `key`: its edition, shared with other chats, the run being this one's)."""
        dest = await self._here(chat)
        if dest is None:
            return Answer(Notice("no_digest_here"))
        page = await take_page(self.engine, dest.id, key, self.clock())
        if page is None or not page.items:
            return Answer(Notice("more_none"))
        return Answer(_page_answer(page), public=True)


def key_of(ref: str, keys: Sequence[str]) -> str | None:
    """Which of a message's PR keys a button's REF names (`owner/repo#7422`, or `7422` alone
    where the whole REF did not fit the platform's button value)."""
    if ref in keys:
        return ref
    found = [key for key in keys if key.rpartition("#")[2] == ref]
    return found[0] if len(found) == 1 else None


@dataclass(frozen=True, slots=True)
class ReadMessage:
    """A digest message of a chat as it was posted (its rendered payload: the edit starts from
    it, so it reads as a fresh render but for the marks), and who read which of its PRs there."""

    row: int  # its outbox row: what "mark all read" carries
    external_id: str  # the platform's id for it (Slack's ts, Telegram's message_id)
    payload: dict[str, Any]
    keys: tuple[str, ...]  # the PRs it shows, in order
    readers: dict[str, list[str]]  # PR key -> who read it in this chat, in order


@dataclass(frozen=True, slots=True)
class ReadOutcome:
    """What a Read did: who hears what, and the message to show the marks in."""

    told: Notice  # the presser: "✅ REF read by alice, bob", or why nothing was read
    first: tuple[str, ...] = ()  # the PRs read here for the first time
    line: Notice | None = None  # the chat's one line about them (None: no new line)
    again: tuple[tuple[str, Notice], ...] = ()  # PRs read before: their line as it now reads
    message: ReadMessage | None = None  # None: not a digest message of this chat


def _page_answer(page: Page) -> DigestAnswer:
    """A page of "+N more", rendered as a digest; its own "+N more" goes on from there."""
    tags = tuple(dict.fromkeys(tag for _, tag in page.items))
    items = [item for item, _ in page.items]
    title = page.title or default_title([], items)  # the repo, as the digest's header said
    digest = build_digest(items, DigestFilter(tags=tags, max_items=len(items)), title)
    digest = dataclasses.replace(digest, total=digest.total + page.left, more=page.left)
    options = DigestOptions(more_key=str(page.key) if page.left else "")
    return DigestAnswer(digest, page.at.date(), options)
