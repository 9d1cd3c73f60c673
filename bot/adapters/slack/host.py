"""What the modal and the Home tab use of the listeners (`SlackListeners` has all of it):
named here, so those modules need not import the listeners that register them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

from bot.adapters.slack.users import SlackUsers
from bot.chat.answers import Answer, Chat
from bot.chat.requests import Request
from bot.chat.service import ChatService
from bot.core.models import Locale
from bot.core.render.renderer import Renderer

Answering = Callable[[bool], Coroutine[Any, Any, None]]  # given: is the store down?
Ack = Callable[..., Awaitable[Any]]


class ListenerHost(Protocol):
    service: ChatService
    renderer: Renderer
    users: SlackUsers
    default_locale: Locale  # what a request is answered in when the store cannot say

    def spawn(self, context: dict[str, Any], answer: Answering) -> bool:
        """Queue `answer` to run after the ack, once per request (see listeners._once);
        False when the work queue did not take it (the bot is busy)."""
        ...

    async def chat(self, payload: dict[str, Any], user_name: str) -> Chat: ...

    async def answer(
        self,
        payload: dict[str, Any],
        user_name: str,
        parse: Callable[[], Request],
        store_down: bool,
    ) -> tuple[Answer, Chat]: ...

    async def announce(self, answer: Answer, chat: Chat) -> None: ...
