"""What answering a chat command produces (data; adapters render it) and who asked, where."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import date

from bot.core.digest.select import Digest
from bot.core.digest.select import StoredReport as StoredReport  # what an answer shows
from bot.core.models import Locale, Platform, Section
from bot.core.render.options import DigestOptions


@dataclass(frozen=True, slots=True)
class Notice:
    key: str
    params: dict[str, str] = field(default_factory=dict)
    # Said in a private chat (a Slack DM, a Telegram private chat): its words name the person
    # ("your subscriptions"), not the place. Answerer.answer sets it from the Chat.
    private: bool = field(default=False, compare=False)


@dataclass(frozen=True, slots=True)
class SectionAnswer:
    item: StoredReport
    section: Section
    by_section: bool = False  # the Full report button: a new message at each section


@dataclass(frozen=True, slots=True)
class DigestAnswer:
    digest: Digest
    day: date  # the digest's heading date: the day it was asked for
    options: DigestOptions | None = None  # a "+N more" page: its own button to the next one


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
    locale: Locale  # ChatService.chat_at: the destination's, the user's, or config.locale
    user_name: str = ""
    private: bool = False  # a Slack DM or a Telegram private chat: the person owns it


def in_private(answer: Answer, chat: Chat) -> Answer:
    """`answer` with its notices marked as said in `chat` when that is a private chat."""
    if not chat.private or not isinstance(answer.reply, Notice):
        return answer
    return replace(answer, reply=replace(answer.reply, private=True))
