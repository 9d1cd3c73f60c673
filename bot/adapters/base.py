"""What every chat adapter is and may use.

`bot/service/app.py` builds one `AdapterDeps` and hands it, with the platform's own settings, to
each adapter: the adapters never see the service, so they cannot reach past what is listed here.
Commands are answered by the one `Answerer`; a `Chat` is built only by `chat_at`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.routing import BaseRoute

from bot.adapters.work import WorkLimits
from bot.chat.answers import Answerer, Chat
from bot.core.clock import Clock
from bot.core.models import Locale, Platform
from bot.core.render.renderer import Renderer
from bot.core.store.subscriptions.destination_store import DestinationStore


class Adapter(Protocol):
    """A chat platform's inbound side (commands, events); outbound goes through the outbox."""

    name: str

    def routes(self) -> list[BaseRoute]:
        """HTTP routes it serves (webhooks); may be empty (Socket Mode, long polling)."""
        ...

    async def start(self) -> None: ...

    def stop_taking_work(self) -> None:
        """At SIGTERM: take no more chat work and drop what is queued (answers running go
        on); `stop` then lets those finish, within a bounded grace."""
        ...

    async def stop(self) -> None: ...


@dataclass(frozen=True)
class AdapterDeps:
    """Everything an adapter may use, shared by all of them."""

    answerer: Answerer
    renderer: Renderer
    destinations: DestinationStore
    engine: AsyncEngine  # inbound dedupe and leases
    clock: Clock

    @property
    def work_limits(self) -> WorkLimits:
        """The config's `chat_work`: how much chat work each platform takes on at once."""
        work = self.answerer.config.chat_work
        return WorkLimits(
            queue_length=work.queue_length,
            workers=work.workers,
            per_user_burst=work.per_user_burst,
            per_user_per_minute=work.per_user_per_minute,
        )

    @property
    def default_locale(self) -> Locale:
        """The config's `locale`: what a chat with no destination (nor a language of its own
        that we speak) is answered in."""
        return self.answerer.config.locale


async def nobody_is_admin() -> bool:
    """For a chat where nothing that needs an admin can be asked (a digest's button)."""
    return False


async def chat_at(
    destinations: DestinationStore,
    platform: Platform,
    chat_id: str,
    user_id: str,
    *,
    default_locale: Locale,
    is_admin: Callable[[], Awaitable[bool]] = nobody_is_admin,
    user_name: str = "",
    user_locale: Locale | None = None,
) -> Chat:
    """Who asks, where. The language: the chat's digests' (its destination's), else the user's
    own when the platform tells it and we speak it (Telegram), else the config's `locale`."""
    locale = await destinations.locale_of(platform, chat_id) or user_locale or default_locale
    return Chat(
        platform,
        chat_id,
        user_id,
        is_admin,
        locale,
        user_name,
        is_private(platform, chat_id, user_id),
    )


def is_private(platform: Platform, chat_id: str, user_id: str) -> bool:
    """A Slack DM (its channel id starts with D) or a Telegram private chat (its id is the
    user's, and positive: an anonymous admin speaks as the group, whose negative id is then
    both): the person owns the subscriptions made there."""
    if platform is Platform.SLACK:
        return chat_id.startswith("D")
    return platform is Platform.TELEGRAM and chat_id == user_id and not chat_id.startswith("-")
