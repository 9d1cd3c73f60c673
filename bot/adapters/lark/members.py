"""Who the bot is in Feishu, what kind of chat a chat is, and who administers it.

- The bot's own open_id (`GET /open-apis/bot/v3/info`) tells a message that @mentions the bot
  from one that @mentions someone else in a group the bot reads.
- A person's name (`GET /open-apis/contact/v3/users/:user_id`), for "✅ alice" and for the
  announcement of who changed a subscription; their open_id when Feishu will not say (the
  app lacks `contact:user.base:readonly`).
- A group's admins, who may change its subscriptions and mute its tags: its owner and its
  managers (`GET /open-apis/im/v1/chats/:chat_id`, `owner_id` and `user_manager_id_list`,
  as open_ids), and anyone `lark.admins` names. In a one-to-one chat the person owns it.

Chat facts are kept for `CHAT_TTL_SECONDS`, so a burst of presses asks Feishu once; a chat
Feishu would not describe (an outage, a missing scope) has no admins but `lark.admins`, and
the log says why.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from lark_oapi.api.contact.v3.model.get_user_request import GetUserRequest
from lark_oapi.api.contact.v3.model.get_user_response import GetUserResponse
from lark_oapi.api.im.v1.model.get_chat_request import GetChatRequest
from lark_oapi.api.im.v1.model.get_chat_response import GetChatResponse
from lark_oapi.core.enum import AccessTokenType, HttpMethod
from lark_oapi.core.model import BaseRequest

from bot.adapters.lark.client import LarkClient
from bot.logs import log

logger = logging.getLogger("prdigest.lark")

BOT_INFO_PATH = "/open-apis/bot/v3/info"
CHAT_TTL_SECONDS = 60.0
MAX_CHATS_KEPT = 4096
P2P = "p2p"  # a one-to-one chat's chat_mode (and a message's chat_type)


@dataclass(frozen=True, slots=True)
class ChatFacts:
    mode: str  # "group", "topic" or "p2p"; "" when Feishu would not say
    admins: frozenset[str]  # the owner's and the managers' open_ids


UNKNOWN = ChatFacts("", frozenset())


def bot_info_request() -> BaseRequest:
    """The bot's own profile (the SDK has no model for this v3 API)."""
    builder = BaseRequest.builder().http_method(HttpMethod.GET).uri(BOT_INFO_PATH)
    return builder.token_types({AccessTokenType.TENANT}).build()


class LarkMembers:
    def __init__(
        self,
        client: LarkClient,
        admins: tuple[str, ...],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.admins = frozenset(admins)
        self.clock = clock
        self._bot: str | None = None
        self._chats: OrderedDict[str, tuple[float, ChatFacts]] = OrderedDict()
        self._names: OrderedDict[str, str] = OrderedDict()

    async def bot_open_id(self) -> str | None:
        """The bot's open_id, asked once; None while Feishu cannot say."""
        if self._bot is None:
            answer = await self.client.ask(bot_info_request(), "lark.bot_info_failed")
            if answer is None:
                return None
            bot = answer.body.get("bot")
            found = bot.get("open_id") if isinstance(bot, dict) else None
            if not isinstance(found, str) or not found:
                log(logger, "lark.bot_info_refused", logging.WARNING, code=answer.code)
                return None
            self._bot = found
        return self._bot

    async def name_of(self, open_id: str) -> str:
        """The person's name, asked once per person; their open_id when Feishu will not say."""
        if open_id in self._names:
            return self._names[open_id]
        request = GetUserRequest.builder().user_id(open_id).user_id_type("open_id").build()
        answer = await self.client.ask(request, "lark.user_info_failed")
        if answer is None:
            return open_id
        parsed = GetUserResponse(answer.body)
        user = parsed.data.user if parsed.success() and parsed.data is not None else None
        if user is None or not user.name:
            log(logger, "lark.user_info_refused", logging.WARNING, code=answer.code)
            return open_id
        self._names[open_id] = str(user.name)
        while len(self._names) > MAX_CHATS_KEPT:
            self._names.popitem(last=False)
        return self._names[open_id]

    async def facts(self, chat_id: str) -> ChatFacts:
        kept = self._chats.get(chat_id)
        if kept is not None and self.clock() - kept[0] < CHAT_TTL_SECONDS:
            return kept[1]
        found = await self._ask(chat_id)
        if found is not UNKNOWN:
            self._chats[chat_id] = (self.clock(), found)
            self._chats.move_to_end(chat_id)
            while len(self._chats) > MAX_CHATS_KEPT:
                self._chats.popitem(last=False)
        return found

    async def _ask(self, chat_id: str) -> ChatFacts:
        request = GetChatRequest.builder().chat_id(chat_id).user_id_type("open_id").build()
        answer = await self.client.ask(request, "lark.chat_info_failed")
        if answer is None:
            return UNKNOWN
        parsed = GetChatResponse(answer.body)
        if not parsed.success() or parsed.data is None:
            log(logger, "lark.chat_info_refused", logging.WARNING, chat=chat_id, code=answer.code)
            return UNKNOWN
        data = parsed.data
        admins = {str(data.owner_id)} if data.owner_id else set()
        admins.update(str(manager) for manager in data.user_manager_id_list or [])
        return ChatFacts(str(data.chat_mode or ""), frozenset(admins))

    async def is_admin(self, chat_id: str, open_id: str) -> bool:
        """Named in `lark.admins`, the person of a one-to-one chat, or the group's owner or
        one of its managers."""
        if open_id in self.admins:
            return True
        facts = await self.facts(chat_id)
        return facts.mode == P2P or open_id in facts.admins
