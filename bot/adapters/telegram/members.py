"""Who may change a chat's subscription, which language a chat reads, and the bot's own
membership's statuses (ChatService.bot_removed / bot_back turn its destination off and on).

Admin policy: in a private chat the user owns the chat. In a group or supergroup only its
administrators and its creator (`getChatMember`) may; an anonymous admin (a message sent "as
the group": `sender_chat` is the chat itself, which only admins can do) counts as an admin; a
message sent on behalf of a linked channel does not.
"""

from __future__ import annotations

import logging

from telegram import Bot, Message, User
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import TelegramError

from bot.core.models import Locale
from bot.logs import log

logger = logging.getLogger("prdigest.telegram")

ADMIN_STATUSES = frozenset({ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER})
GONE_STATUSES = frozenset({ChatMemberStatus.LEFT, ChatMemberStatus.BANNED})


async def is_chat_admin(bot: Bot, message: Message) -> bool:
    """May the sender of `message` change its chat's subscription and schedule?"""
    chat = message.chat
    if chat.type == ChatType.PRIVATE:
        return True
    if message.sender_chat is not None:
        return message.sender_chat.id == chat.id  # anonymous admin, not a linked channel
    if message.from_user is None:
        return False
    try:
        member = await bot.get_chat_member(chat.id, message.from_user.id)
    except TelegramError as exc:
        log(logger, "telegram.admin_check_failed", logging.WARNING, chat=chat.id, error=str(exc))
        return False
    return member.status in ADMIN_STATUSES


def sender_name(message: Message) -> str:
    """How announcements name who changed something."""
    if message.sender_chat is not None:
        return message.sender_chat.title or str(message.sender_chat.id)
    user = message.from_user
    return user.full_name if user is not None else str(message.chat.id)


def user_locale(user: User | None) -> Locale | None:
    """The user's Telegram language when we speak it (`zh-hans` → zh, `en-us` → en); None when
    Telegram does not say or it is another one. A chat with digests reads theirs instead."""
    code = (user.language_code or "") if user is not None else ""
    primary = code.lower().replace("_", "-").split("-")[0]
    return next((locale for locale in Locale if locale.value == primary), None)
