"""The Telegram handler table: commands, digest buttons, the bot's membership, group upgrades.

Every update first passes `drop_repeats` (group -1): an `update_id` seen before, by this
process or an earlier one, is not handled again. Commands come only from new messages
(`filters.UpdateType.MESSAGE`), so an edited message never runs a command twice, and PTB's
CommandHandler already ignores `/cmd@OtherBot`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from functools import partial

from telegram import Message, Update, User
from telegram.constants import ChatType
from telegram.ext import (
    ApplicationHandlerStop,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)

from bot.adapters.answering import UNAVAILABLE, answer_messages
from bot.adapters.base import AdapterDeps, is_private
from bot.adapters.telegram.entry_buttons import EntryButtons
from bot.adapters.telegram.entry_menu import EntryMenu
from bot.adapters.telegram.keyboard import TelegramKeyboard
from bot.adapters.telegram.members import (
    GONE_STATUSES,
    is_chat_admin,
    sender_name,
    user_locale,
)
from bot.adapters.telegram.reply import Replier
from bot.adapters.telegram.updates import TelegramApp
from bot.chat.answers import Answer, Chat, Notice, Reply
from bot.chat.commands import COMMAND_MENU, VERB_ALIASES, opens_picker, parse, parse_mention
from bot.chat.service import ChatService, nobody_is_admin
from bot.core.models import Format, Locale, Platform
from bot.core.render.telegram import parse_callback_data
from bot.logs import log

logger = logging.getLogger("prdigest.telegram")

Context = ContextTypes.DEFAULT_TYPE
_COMMAND_LINE = re.compile(r"/(?P<name>[^\s@]+)(?:@(?P<bot>\S+))?\s*(?P<args>.*)", re.DOTALL)


class TelegramHandlers:
    def __init__(self, deps: AdapterDeps, replier: Replier) -> None:
        self.clock = deps.clock
        self.service: ChatService = deps.chat
        self.renderer = deps.renderer
        self.default_locale = deps.default_locale
        self.replier = replier
        self.keyboard = TelegramKeyboard(deps, replier, self._chat)  # `/subscribe` alone
        self.entry_buttons = EntryButtons(deps, replier, self._chat)  # Read, Snooze, Mute…
        self.entry_menu = EntryMenu(deps, self._chat)  # ⋯: an entry's menu, and Back

    def register(self, app: TelegramApp) -> None:
        new_messages = filters.UpdateType.MESSAGE
        app.add_handler(TypeHandler(Update, self.drop_repeats), group=-1)
        # The menu's commands, and the other names some answer to (`/search` is `/find`).
        for name in [*(command.name for command in COMMAND_MENU), *VERB_ALIASES]:
            app.add_handler(CommandHandler(name, self.on_command, filters=new_messages))
        app.add_handler(MessageHandler(filters.COMMAND & new_messages, self.on_unknown_command))
        text = filters.TEXT & ~filters.COMMAND & new_messages
        app.add_handler(MessageHandler(text, self.on_text))
        app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, self.on_migration))
        self.keyboard.register(app)
        self.entry_buttons.register(app)
        self.entry_menu.register(app)
        app.add_handler(CallbackQueryHandler(self.on_button))
        app.add_handler(ChatMemberHandler(self.on_membership, ChatMemberHandler.MY_CHAT_MEMBER))
        app.add_error_handler(self.on_error)

    async def drop_repeats(self, update: Update, context: Context) -> None:
        """Telegram redelivers after a failed webhook answer or an unconfirmed poll."""
        key = f"telegram:{context.bot.id}:{update.update_id}"
        first = await self.service.first_time(key)
        if first is None:
            # Nothing can be changed while the store is down: the command's own handler
            # fails on it too, and `on_error` tells the chat the bot is unavailable.
            return
        if not first:
            log(logger, "telegram.update_repeated", update_id=update.update_id)
            raise ApplicationHandlerStop

    async def _chat(
        self,
        chat_id: int,
        user_id: int,
        user: User | None,
        user_name: str,
        is_admin: Callable[[], Awaitable[bool]] = nobody_is_admin,
    ) -> Chat:
        return await self.service.chat_at(
            Platform.TELEGRAM,
            str(chat_id),
            str(user_id),
            private=is_private(Platform.TELEGRAM, str(chat_id), str(user_id)),
            is_admin=is_admin,
            user_name=user_name,
            user_locale=user_locale(user),
        )

    async def _message_chat(self, message: Message, context: Context) -> Chat:
        """Who sent `message` (a user, or a chat speaking as itself), where."""
        sender = message.sender_chat or message.from_user
        return await self._chat(
            message.chat.id,
            sender.id if sender is not None else message.chat.id,
            message.from_user,
            sender_name(message),
            partial(is_chat_admin, context.bot, message),
        )

    async def on_command(self, update: Update, context: Context) -> None:
        message = update.message
        line = _COMMAND_LINE.match(message.text or "") if message is not None else None
        if message is None or line is None:
            return
        verb, args = line["name"].lower(), line["args"]
        chat = await self._message_chat(message, context)
        if verb == "start":
            await self.service.bot_back(Platform.TELEGRAM, chat.chat_id)
        if opens_picker(partial(parse, verb, args)):
            refused = await self.keyboard.open(message, chat)
            if refused is not None:
                await self._reply(message, _visible_reply(message, refused), chat.locale)
            return
        answer = await self.service.answer_text(lambda: parse(verb, args), chat)
        log(logger, "telegram.command", command=verb, chat=chat.chat_id, reply=_kind(answer))
        await self._reply(message, _visible_reply(message, answer), chat.locale)

    async def on_unknown_command(self, update: Update, context: Context) -> None:
        """Answer a command we do not know only when it is surely meant for us: in a private
        chat, or addressed `/cmd@ourbot` (a bare `/cmd` in a group may be another bot's)."""
        message = update.message
        line = _COMMAND_LINE.match(message.text or "") if message is not None else None
        if message is None or line is None:
            return
        addressee = (line["bot"] or "").lower()
        if addressee and addressee != (context.bot.username or "").lower():
            return
        if not addressee and message.chat.type != ChatType.PRIVATE:
            return
        chat = await self._message_chat(message, context)
        notice = Notice("unknown_command", {"command": f"/{line['name']}"[:40]})
        await self._reply(message, notice, chat.locale)

    async def on_text(self, update: Update, context: Context) -> None:
        """Words, as a Slack mention reads them ("@bot #7422 的风险", "risks of 7422"): in a
        group only when the bot is @mentioned; in a private chat always, and text it cannot
        read gets a hint how to ask."""
        message = update.message
        if message is None or not message.text:
            return
        private = message.chat.type == ChatType.PRIVATE
        words = _addressed(message.text, context.bot.username or "")
        if words is None and not private:
            return
        inv = parse_mention(words if words is not None else message.text)
        chat = await self._message_chat(message, context)
        if inv is None:
            log(logger, "telegram.text_unread", chat=chat.chat_id)
            await self._reply(message, Notice("how_to_ask"), chat.locale)
            return
        answer = await self.service.answer(inv, chat)
        log(logger, "telegram.mention", chat=chat.chat_id, reply=_kind(answer))
        await self._reply(message, _visible_reply(message, answer), chat.locale)

    async def _reply(self, message: Message, reply: Reply, locale: Locale) -> None:
        rendered = await answer_messages(self.renderer, reply, Format.TELEGRAM, locale)
        await self.replier.send(str(message.chat.id), rendered, reply_to=message.message_id)

    async def on_button(self, update: Update, context: Context) -> None:
        """A digest entry's button (risks, files): the section goes to the chat."""
        query = update.callback_query
        if query is None:
            return
        await query.answer()  # stops the button's spinner; the answer is a message
        message = query.message
        try:
            section, ref = parse_callback_data(query.data or "")
        except ValueError:
            return
        if message is None:
            return
        user = query.from_user
        chat = await self._chat(message.chat.id, user.id, user, user.full_name)
        answer = await self.service.answer_text(lambda: parse("pr", f"{ref} {section}"), chat)
        log(logger, "telegram.button", section=section.value, ref=ref, chat=chat.chat_id)
        rendered = await answer_messages(self.renderer, answer.reply, Format.TELEGRAM, chat.locale)
        await self.replier.send(chat.chat_id, rendered, reply_to=message.message_id)

    async def on_membership(self, update: Update, context: Context) -> None:
        change = update.my_chat_member
        if change is None:
            return
        old, new = change.old_chat_member.status, change.new_chat_member.status
        if new in GONE_STATUSES:
            await self.service.bot_removed(Platform.TELEGRAM, str(change.chat.id), new)
        elif old in GONE_STATUSES:
            await self.service.bot_back(Platform.TELEGRAM, str(change.chat.id))

    async def on_migration(self, update: Update, context: Context) -> None:
        message = update.message
        if message is not None and message.migrate_to_chat_id is not None:
            await self.service.chat_moved(
                Platform.TELEGRAM, str(message.chat.id), str(message.migrate_to_chat_id)
            )

    async def on_error(self, update: object, context: Context) -> None:
        """The one handler at this edge: log, and tell the chat something went wrong, or that
        the bot is temporarily unavailable while its store cannot be reached."""
        error = context.error
        unavailable = error is not None and self.service.is_outage(error)
        update_id = update.update_id if isinstance(update, Update) else None
        log(
            logger,
            "telegram.handler_failed",
            logging.WARNING if unavailable else logging.ERROR,
            update_id=update_id,
            error=type(error).__name__,
            detail=str(error)[:500],
            unavailable=unavailable,
        )
        message = update.message if isinstance(update, Update) else None
        if message is not None:
            locale = user_locale(message.from_user) or self.default_locale
            reply = UNAVAILABLE if unavailable else Notice("error")
            await self._reply(message, reply, locale)


def _addressed(text: str, username: str) -> str | None:
    """The text with "@ourbot" taken out, or None when it does not name the bot."""
    if not username:
        return None
    mention = re.compile(rf"@{re.escape(username)}\b", re.IGNORECASE)
    if mention.search(text) is None:
        return None
    return mention.sub(" ", text).strip()


def _visible_reply(message: Message, answer: Answer) -> Reply:
    """In a group everyone sees the bot's answer, so when the command changed the chat's
    subscription the answer is the announcement (it names who changed what): one message."""
    if answer.announce is not None and message.chat.type != ChatType.PRIVATE:
        return answer.announce
    return answer.reply


def _kind(answer: Answer) -> str:
    reply = answer.reply
    return reply.key if isinstance(reply, Notice) else type(reply).__name__
