"""A digest entry's reading buttons in Telegram: Read, Full report (the entry's row), Snooze
and Mute tag (its ⋯ menu, entry_menu.py), and the digest's "+N more" (callback_data
`read:REF`, `snooze:REF`, `mute:TAG`, `report:REF`, `more:RUN`; bot/core/render/actions.py).

The presser hears the outcome in the button's answer (answerCallbackQuery); what the whole
chat should know ("✅ #7422 read by @alice") and a "+N more" page go to the chat as a reply to
the digest message, and so does the full report, as one message paging through its sections
(report_pager.py). Mute asks Telegram whether the presser is an admin.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Final

from telegram import Message, Update, User
from telegram.ext import CallbackQueryHandler, ContextTypes

from bot.adapters.answering import answer_messages
from bot.adapters.base import AdapterDeps
from bot.adapters.telegram.keyboard import ChatFactory, presser_is_admin
from bot.adapters.telegram.reply import Replier
from bot.adapters.telegram.report_pager import ReportPager
from bot.adapters.telegram.updates import TelegramApp
from bot.chat.answers import Notice, SectionAnswer, render_notice
from bot.core.models import Format
from bot.core.render.actions import EntryAction, parse_action
from bot.core.render.limits.telegram import TELEGRAM_ALERT_MAX
from bot.logs import log

logger = logging.getLogger("prdigest.telegram")

# Every action but ⋯ (`menu:REF`), which only edits the keyboard (entry_menu.py), and a full
# report's sections (`sec:`), which only edit the report's message (report_pager.py).
_OWN_HANDLERS: Final = (EntryAction.MENU, EntryAction.SECTION)
_ACTIONS: Final = [action.value for action in EntryAction if action not in _OWN_HANDLERS]
PATTERN: Final = "^(" + "|".join(_ACTIONS) + "):"

Context = ContextTypes.DEFAULT_TYPE


def presser_name(user: User) -> str:
    """How a notice names who pressed: @username, else the full name."""
    return f"@{user.username}" if user.username else user.full_name


class EntryButtons:
    def __init__(self, deps: AdapterDeps, replier: Replier, chat_at: ChatFactory) -> None:
        self.service = deps.chat
        self.renderer = deps.renderer
        self.replier = replier
        self.chat_at = chat_at
        self.pager = ReportPager(deps, replier, chat_at)  # Full report, and its sections

    def register(self, app: TelegramApp) -> None:
        """Before the Risks/Files buttons' handler: the first matching handler takes a press."""
        app.add_handler(CallbackQueryHandler(self.on_press, pattern=PATTERN))
        self.pager.register(app)

    async def on_press(self, update: Update, context: Context) -> None:
        query = update.callback_query
        message = query.message if query is not None else None
        parsed = parse_action(query.data or "") if query is not None else None
        if query is None or parsed is None or not isinstance(message, Message):
            if query is not None:
                await query.answer()
            return
        action, argument = parsed
        user = query.from_user
        is_admin = partial(presser_is_admin, context.bot, message, user.id)
        chat = await self.chat_at(message.chat.id, user.id, user, presser_name(user), is_admin)
        answer = await self.service.answer_action(action, argument, chat)
        reply = answer.reply
        log(logger, "telegram.entry_button", action=action.value, chat=chat.chat_id)
        if isinstance(reply, SectionAnswer) and reply.by_section:
            await self.pager.post(query, chat, reply.item, reply_to=message.message_id)
            return
        if isinstance(reply, Notice):
            told = render_notice(self.renderer, reply, Format.TEXT, chat.locale).text
            await query.answer(told[:TELEGRAM_ALERT_MAX], show_alert=not answer.public)
            if not answer.public:
                return
        else:
            await query.answer()
        rendered = await answer_messages(self.renderer, reply, Format.TELEGRAM, chat.locale)
        await self.replier.send(chat.chat_id, rendered, reply_to=message.message_id)
