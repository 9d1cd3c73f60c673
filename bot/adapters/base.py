"""What every chat adapter is and may use.

`bot/service/app.py` builds one `AdapterDeps` and hands it, with the platform's own settings, to
each adapter. Its `chat` (a `ChatService`) is the adapter's only way into the bot: answers,
subscriptions, reading, the home, the bot's membership of a chat, inbound dedupe and leases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from starlette.routing import BaseRoute

from bot.adapters.work import WorkLimits
from bot.chat.service import ChatService
from bot.core.clock import Clock
from bot.core.models import Locale, Platform
from bot.core.render.renderer import Renderer


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

    chat: ChatService
    renderer: Renderer
    clock: Clock

    @property
    def work_limits(self) -> WorkLimits:
        """The config's `chat_work`: how much chat work each platform takes on at once."""
        work = self.chat.chat_work
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
        return self.chat.default_locale


def is_private(platform: Platform, chat_id: str, user_id: str) -> bool:
    """A Slack DM (its channel id starts with D) or a Telegram private chat (its id is the
    user's, and positive: an anonymous admin speaks as the group, whose negative id is then
    both): the person owns the subscriptions made there."""
    if platform is Platform.SLACK:
        return chat_id.startswith("D")
    return platform is Platform.TELEGRAM and chat_id == user_id and not chat_id.startswith("-")
