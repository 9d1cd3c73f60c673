"""The one door from a chat platform into the bot: `ChatService`.

An adapter gets a ChatService and its platform's settings, nothing else: no engine, no store,
no web app. What a person can ask for (answers, subscription and reading verbs, search, the
Home tab's data) and what a platform tells us about a chat (the bot removed, back, moved; an
event seen before) go through here, so a new platform is one package under `adapters/` that
talks to this protocol. `ChatApp` is the implementation `bot/service/app.py` builds once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Protocol

from sqlalchemy.exc import SQLAlchemyError

from bot.chat.answers import Answerer
from bot.chat.home import HomeData, HomeSubscription, home_data, owned_subscriptions
from bot.chat.membership import Membership
from bot.chat.messages import Answer, Chat, Notice
from bot.chat.picker import Choices
from bot.chat.picking import choices, picker_refusal
from bot.chat.reading import ReadMessage, ReadOutcome
from bot.chat.requests import Request
from bot.core.clock import Clock
from bot.core.digest.select import StoredReport
from bot.core.models import Locale, Platform
from bot.core.render.actions import EntryAction
from bot.core.store import dedupe, leases
from bot.core.store.errors import is_outage
from bot.core.store.leases import LeaseHeld
from bot.settings.work import ChatWorkConfig

__all__ = ["ChatApp", "ChatService", "LeaseError", "LeaseHeld"]


class LeaseError(Exception):
    """The lease could not be read or written (the store is down or refused)."""


async def nobody_is_admin() -> bool:
    """For a chat where nothing that needs an admin can be asked (a digest's button)."""
    return False


class ChatService(Protocol):
    """Everything a chat adapter may ask of the bot."""

    @property
    def default_locale(self) -> Locale:
        """What a chat with no destination (nor a language of its own we speak) reads."""
        ...

    @property
    def chat_work(self) -> ChatWorkConfig:
        """How much chat work each platform takes on at once (`chat_work:`)."""
        ...

    async def chat_at(
        self,
        platform: Platform,
        chat_id: str,
        user_id: str,
        *,
        private: bool,
        is_admin: Callable[[], Awaitable[bool]] = nobody_is_admin,
        user_name: str = "",
        user_locale: Locale | None = None,
    ) -> Chat: ...

    async def answer(self, request: Request, chat: Chat) -> Answer: ...

    async def answer_text(self, parse: Callable[[], Request], chat: Chat) -> Answer: ...

    async def answer_action(self, action: EntryAction, argument: str, chat: Chat) -> Answer: ...

    async def find_report(self, text: str) -> StoredReport | Notice: ...

    async def read(self, argument: str, chat: Chat, external_id: str) -> ReadOutcome:
        """✅ Read (`read:REF`, REF the argument) pressed on the message `external_id`."""
        ...

    async def message_shown(self, chat: Chat, external_id: str) -> ReadMessage | None:
        """This chat's digest message `external_id`: its PRs and who read them here."""
        ...

    async def read_all(self, chat: Chat, key: str) -> ReadOutcome:
        """Every PR of this chat's digest message `key` (ReadMessage.row) read here."""
        ...

    async def picker_refusal(self, chat: Chat) -> Answer | None:
        """None when the subscribe picker may open for `chat`'s user; else their answer."""
        ...

    async def picker_choices(self) -> Choices: ...

    async def home(self, platform: Platform, user_id: str) -> HomeData: ...

    async def owned(self, platform: Platform, user_id: str) -> list[HomeSubscription]: ...

    async def first_time(self, event_key: str) -> bool | None:
        """Seen for the first time (True), before (False), or the store is down (None)."""
        ...

    async def forget_old_events(self) -> None: ...

    def is_outage(self, error: BaseException) -> bool: ...

    async def bot_removed(self, platform: Platform, chat_id: str, status: str) -> bool: ...

    async def bot_back(self, platform: Platform, chat_id: str) -> bool: ...

    async def chat_moved(self, platform: Platform, old_id: str, new_id: str) -> bool: ...

    async def hold_lease(self, name: str, holder: str, ttl: timedelta) -> LeaseHeld | None:
        """Take or renew the lease; None when held, else who holds it. LeaseError if the
        store cannot say."""
        ...

    async def release_lease(self, name: str, holder: str) -> None: ...


class ChatApp:
    """The ChatService of one process, over the one Answerer every platform shares."""

    def __init__(self, answerer: Answerer, clock: Clock) -> None:
        self.answerer = answerer
        self.clock = clock
        self.engine = answerer.destinations.engine
        self.membership = Membership(answerer.destinations)

    @property
    def default_locale(self) -> Locale:
        return self.answerer.config.locale

    @property
    def chat_work(self) -> ChatWorkConfig:
        return self.answerer.config.chat_work

    async def chat_at(
        self,
        platform: Platform,
        chat_id: str,
        user_id: str,
        *,
        private: bool,
        is_admin: Callable[[], Awaitable[bool]] = nobody_is_admin,
        user_name: str = "",
        user_locale: Locale | None = None,
    ) -> Chat:
        """Who asks, where. The language: the chat's digests' (its destination's), else the
        user's own when the platform tells it and we speak it, else the config's `locale`."""
        destinations = self.answerer.destinations
        found = await destinations.locale_of(platform, chat_id)
        locale = found or user_locale or self.default_locale
        return Chat(platform, chat_id, user_id, is_admin, locale, user_name, private)

    async def answer(self, request: Request, chat: Chat) -> Answer:
        return await self.answerer.answer(request, chat)

    async def answer_text(self, parse: Callable[[], Request], chat: Chat) -> Answer:
        return await self.answerer.answer_text(parse, chat)

    async def answer_action(self, action: EntryAction, argument: str, chat: Chat) -> Answer:
        return await self.answerer.answer_action(action, argument, chat)

    async def find_report(self, text: str) -> StoredReport | Notice:
        return await self.answerer.reading.find_report(text)

    async def read(self, argument: str, chat: Chat, external_id: str) -> ReadOutcome:
        return await self.answerer.reading.read(argument, chat, external_id)

    async def message_shown(self, chat: Chat, external_id: str) -> ReadMessage | None:
        return await self.answerer.reading.message_shown(chat, external_id)

    async def read_all(self, chat: Chat, key: str) -> ReadOutcome:
        return await self.answerer.reading.read_all(chat, key)

    async def picker_refusal(self, chat: Chat) -> Answer | None:
        return await picker_refusal(self.answerer, chat)

    async def picker_choices(self) -> Choices:
        return await choices(self.answerer)

    async def home(self, platform: Platform, user_id: str) -> HomeData:
        return await home_data(self.answerer, platform, user_id)

    async def owned(self, platform: Platform, user_id: str) -> list[HomeSubscription]:
        return await owned_subscriptions(self.answerer, platform, user_id, self.clock())

    async def first_time(self, event_key: str) -> bool | None:
        return await dedupe.first_time_unless_down(self.engine, event_key, self.clock)

    async def forget_old_events(self) -> None:
        await dedupe.forget_older_than(self.engine, self.clock)

    def is_outage(self, error: BaseException) -> bool:
        return is_outage(error)

    async def bot_removed(self, platform: Platform, chat_id: str, status: str) -> bool:
        return await self.membership.removed(platform, chat_id, status)

    async def bot_back(self, platform: Platform, chat_id: str) -> bool:
        return await self.membership.returned(platform, chat_id)

    async def chat_moved(self, platform: Platform, old_id: str, new_id: str) -> bool:
        return await self.membership.migrated(platform, old_id, new_id)

    async def hold_lease(self, name: str, holder: str, ttl: timedelta) -> LeaseHeld | None:
        try:
            return await leases.take(self.engine, name, holder, self.clock(), ttl)
        except (SQLAlchemyError, OSError) as exc:
            raise LeaseError(str(exc)[:300]) from exc

    async def release_lease(self, name: str, holder: str) -> None:
        await leases.release(self.engine, name, holder)
