"""A digest entry's ⋯ menu in Telegram.

⋯ (`menu:REF`) edits the digest message's keyboard in place (editMessageReplyMarkup): the
PR's menu opens under its row — Snooze, Risks, Back, then Mute for each of its tags, every
button naming the PR. Back (`back:REF`), or ⋯ again, takes the menu away and leaves the
digest keyboard exactly as it was posted. A menu's buttons carry what the digest's buttons
always carried (`snooze:REF`, `mute:TAG`, `risks:REF`), so a press on one takes the same path
as before (EntryButtons, or the Risks handler).

The keyboard holds its own state (the open menu is in the message), so any replica can take
the next press; opening one PR's menu closes any other.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial
from typing import Any, Final

from telegram import CallbackQuery, InlineKeyboardMarkup, Message, Update
from telegram.ext import CallbackQueryHandler, ContextTypes

from bot.adapters.base import AdapterDeps
from bot.adapters.telegram.keyboard import ChatFactory, presser_is_admin, presser_name
from bot.adapters.telegram.updates import TelegramApp
from bot.chat.answers import Notice, render_notice
from bot.core.models import Format
from bot.core.render.actions import EntryAction, parse_action
from bot.core.render.labels import labels
from bot.core.render.limits.telegram import TELEGRAM_ALERT_MAX
from bot.core.render.telegram import (
    BACK,
    Rows,
    entry_menu,
    menu_closed,
    menu_is_open,
    menu_opened,
    pressed_label,
)
from bot.logs import log

logger = logging.getLogger("prdigest.telegram")

PATTERN: Final = f"^({EntryAction.MENU.value}:|{BACK})"

Context = ContextTypes.DEFAULT_TYPE


def keyboard_rows(markup: InlineKeyboardMarkup | None) -> Rows:
    """A message's inline keyboard as the Bot API's rows of buttons."""
    if markup is None:
        return []
    return [[button.to_dict() for button in row] for row in markup.inline_keyboard]


class EntryMenu:
    def __init__(self, deps: AdapterDeps, chat_at: ChatFactory) -> None:
        self.service = deps.chat
        self.renderer = deps.renderer
        self.chat_at = chat_at

    def register(self, app: TelegramApp) -> None:
        """Before the Risks/Files buttons' handler: the first matching handler takes a press."""
        app.add_handler(CallbackQueryHandler(self.on_press, pattern=PATTERN))

    async def on_press(self, update: Update, context: Context) -> None:
        query = update.callback_query
        message = query.message if query is not None else None
        if query is None or not isinstance(message, Message):
            if query is not None:
                await query.answer()
            return
        data = query.data or ""
        rows = keyboard_rows(message.reply_markup)
        parsed = parse_action(data)
        label = pressed_label(rows, data)
        if data.startswith(BACK) or (parsed is not None and menu_is_open(rows, parsed[1])):
            await _show(query, rows, menu_closed(rows))
        elif parsed is None or parsed[0] is not EntryAction.MENU or label is None:
            await query.answer()  # not a ⋯ this keyboard shows: nothing to open
        else:
            await self._open(query, message, context, rows, (data, parsed[1], label))

    async def _open(
        self,
        query: CallbackQuery,
        message: Message,
        context: Context,
        rows: Rows,
        pressed: tuple[str, str, str],
    ) -> None:
        """The PR's menu under the row of the ⋯ pressed (`pressed`: its data, REF and label)."""
        data, ref, label = pressed
        user = query.from_user
        is_admin = partial(presser_is_admin, context.bot, message, user.id)
        chat = await self.chat_at(message.chat.id, user.id, user, presser_name(user), is_admin)
        found = await self.service.find_report(ref)
        if isinstance(found, Notice):
            told = render_notice(self.renderer, found, Format.TEXT, chat.locale).text
            await query.answer(told[:TELEGRAM_ALERT_MAX], show_alert=True)
            return
        menu = entry_menu(ref, label, found.report.tags, labels(chat.locale))
        log(logger, "telegram.entry_menu", chat=chat.chat_id, ref=ref)
        await _show(query, rows, menu_opened(rows, data, menu))


async def _show(query: CallbackQuery, rows: Sequence[Sequence[Any]], shown: Rows) -> None:
    """Answer the press and show `shown` under the message (Telegram refuses an edit that
    changes nothing, so an unchanged keyboard is left alone)."""
    await query.answer()
    if shown == [list(row) for row in rows]:
        return
    markup = InlineKeyboardMarkup.de_json({"inline_keyboard": shown}, query.get_bot())
    await query.edit_message_reply_markup(markup)
