"""`/subscribe` with no arguments: an inline keyboard of the top tags (tap to toggle, ✅ marks
a picked one) and a row of cadence buttons. A cadence button runs the typed command
`subscribe QUERY at CADENCE` (bot/chat/picking.py) and the keyboard message becomes its
answer (in a group, the announcement of who added what).

The keyboard holds its own state: what is picked is read back from the message's buttons, so
any replica can take the next press. Callback data: `pk:t:TAG` toggles a tag, `pk:c:N` picks
CADENCES[N]; each within Telegram's 64 bytes (a longer tag is not offered).
"""

from __future__ import annotations

import html
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final

from telegram import (
    Bot,
    CallbackQuery,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    Update,
    User,
)
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import CallbackQueryHandler, ContextTypes

from bot.adapters.answering import answer_messages
from bot.adapters.base import AdapterDeps
from bot.adapters.telegram.members import ADMIN_STATUSES
from bot.adapters.telegram.reply import Replier
from bot.adapters.telegram.updates import TelegramApp
from bot.chat.answers import Answer, Chat, Notice, render_notice
from bot.chat.picker import CADENCES, Pick
from bot.chat.picking import picked_parse
from bot.core.models import Format, Locale
from bot.core.render.flow import RenderedMessage
from bot.core.render.limits.telegram import TELEGRAM_ALERT_MAX, TELEGRAM_MAX_CALLBACK_BYTES
from bot.core.render.picker_labels import picker_label
from bot.logs import log

logger = logging.getLogger("prdigest.telegram")

PREFIX: Final = "pk:"
TAG: Final = "pk:t:"
CADENCE: Final = "pk:c:"
TOP_TAGS: Final = 12  # the most frequent tags of the last 30 days
TAGS_PER_ROW: Final = 2
CADENCES_PER_ROW: Final = 2
PICKED: Final = "✅ "
SUBSCRIBED: Final = "subscribed"  # the Answerer's notice for a subscription added

Context = ContextTypes.DEFAULT_TYPE
IsAdmin = Callable[[], Awaitable[bool]]
ChatFactory = Callable[[int, int, User | None, str, IsAdmin], Awaitable[Chat]]
Rows = list[list[InlineKeyboardButton]]


def _rows(buttons: list[InlineKeyboardButton], per_row: int) -> Rows:
    return [buttons[i : i + per_row] for i in range(0, len(buttons), per_row)]


def keyboard(tags: list[tuple[str, int]], locale: Locale) -> InlineKeyboardMarkup:
    """The top tags (none picked yet), then the cadences."""
    fitting = [(t, n) for t, n in tags if len((TAG + t).encode()) <= TELEGRAM_MAX_CALLBACK_BYTES]
    tag_buttons = [
        InlineKeyboardButton(f"{tag} ({n})", callback_data=TAG + tag)
        for tag, n in fitting[:TOP_TAGS]
    ]
    when = [
        InlineKeyboardButton(picker_label(f"cadence_{c}", locale), callback_data=f"{CADENCE}{i}")
        for i, c in enumerate(CADENCES)
    ]
    return InlineKeyboardMarkup(_rows(tag_buttons, TAGS_PER_ROW) + _rows(when, CADENCES_PER_ROW))


def picked_tags(markup: InlineKeyboardMarkup | None) -> list[str]:
    """The tags a keyboard shows as picked, in its order."""
    rows = markup.inline_keyboard if markup is not None else ()
    return [
        str(b.callback_data).removeprefix(TAG)
        for row in rows
        for b in row
        if str(b.callback_data or "").startswith(TAG) and b.text.startswith(PICKED)
    ]


def toggled(markup: InlineKeyboardMarkup, data: str) -> InlineKeyboardMarkup:
    """The same keyboard with the button carrying `data` picked, or no longer picked."""

    def flip(button: InlineKeyboardButton) -> InlineKeyboardButton:
        if button.callback_data != data:
            return button
        text = button.text
        text = text.removeprefix(PICKED) if text.startswith(PICKED) else PICKED + text
        return InlineKeyboardButton(text, callback_data=data)

    return InlineKeyboardMarkup([[flip(b) for b in row] for row in markup.inline_keyboard])


async def presser_is_admin(bot: Bot, message: Message, user_id: int) -> bool:
    """May the user who pressed a button under `message` change its chat's subscriptions?"""
    if message.chat.type == ChatType.PRIVATE:
        return True
    try:
        member = await bot.get_chat_member(message.chat.id, user_id)
    except TelegramError as exc:
        log(logger, "telegram.admin_check_failed", logging.WARNING, error=str(exc))
        return False
    return member.status in ADMIN_STATUSES


def presser_name(user: User) -> str:
    """How a notice names who pressed: @username, else the full name."""
    return f"@{user.username}" if user.username else user.full_name


class PressHandler:
    """What every button handler of a chat holds: the application layer, the renderer, the
    replier, and how to make the presser's Chat."""

    def __init__(self, deps: AdapterDeps, replier: Replier, chat_at: ChatFactory) -> None:
        self.service = deps.chat
        self.renderer = deps.renderer
        self.replier = replier
        self.chat_at = chat_at


class TelegramKeyboard(PressHandler):
    def register(self, app: TelegramApp) -> None:
        """Before the digest buttons' handler: the first matching handler takes a press."""
        app.add_handler(CallbackQueryHandler(self.on_press, pattern=f"^{PREFIX}"))

    async def open(self, message: Message, chat: Chat) -> Answer | None:
        """Send the keyboard under `message`; the answer to give instead when it may not."""
        refusal = await self.service.picker_refusal(chat)
        if refusal is not None:
            return refusal
        found = await self.service.picker_choices()
        if not found.tags:
            text = picker_label("nothing_to_pick", chat.locale)
            await self._send(chat.chat_id, text, None, message.message_id)
            return None
        markup = keyboard(found.tags, chat.locale)
        text = picker_label("keyboard", chat.locale)
        await self._send(chat.chat_id, text, markup, message.message_id)
        return None

    async def _send(
        self, chat_id: str, text: str, markup: InlineKeyboardMarkup | None, reply_to: int
    ) -> None:
        payload: dict[str, Any] = {"text": html.escape(text), "parse_mode": "HTML"}
        if markup is not None:
            payload["reply_markup"] = markup.to_dict()
        await self.replier.send(chat_id, [RenderedMessage(payload, text)], reply_to=reply_to)

    async def on_press(self, update: Update, context: Context) -> None:
        query = update.callback_query
        message = query.message if query is not None else None
        if query is None or not isinstance(message, Message):
            return
        data = query.data or ""
        if data.startswith(TAG) and message.reply_markup is not None:
            await query.answer()
            await query.edit_message_reply_markup(toggled(message.reply_markup, data))
            return
        index = data.removeprefix(CADENCE)
        if data.startswith(CADENCE) and index.isdigit() and int(index) < len(CADENCES):
            await self._finish(query, message, context.bot, CADENCES[int(index)])
            return
        await query.answer()  # a keyboard of an older version: nothing to do

    async def _finish(self, query: CallbackQuery, message: Message, bot: Bot, when: str) -> None:
        user = query.from_user
        is_admin = partial(presser_is_admin, bot, message, user.id)
        chat = await self.chat_at(message.chat.id, user.id, user, user.full_name, is_admin)
        tags = picked_tags(message.reply_markup)
        if not tags:
            await query.answer(picker_label("empty_pick", chat.locale), show_alert=True)
            return
        pick = Pick(tags=tuple(tags), cadence=when)
        answer = await self.service.answer_text(picked_parse(pick), chat)
        reply = answer.reply
        if not isinstance(reply, Notice):  # `subscribe` answers with notices only
            await query.answer()
            return
        log(logger, "telegram.picked", chat=chat.chat_id, reply=reply.key)
        if reply.key != SUBSCRIBED:
            # Refused ("Only admins…", a locked chat): told to the presser, the keyboard stays.
            told = render_notice(self.renderer, reply, Format.TEXT, chat.locale).text
            await query.answer(told[:TELEGRAM_ALERT_MAX], show_alert=True)
            return
        await query.answer()
        shown = answer.announce if answer.announce is not None else reply
        rendered = await answer_messages(self.renderer, shown, Format.TELEGRAM, chat.locale)
        await query.edit_message_text(
            str(rendered[0].payload["text"]), parse_mode="HTML", reply_markup=None
        )
