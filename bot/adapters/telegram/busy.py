"""Telling a Telegram user that the bot is busy: their update was not taken (updates.py).

A webhook answers in its own response body, a Bot API call Telegram makes for us (a reply to
the message, or the button's callback answer), so a flood costs no requests of ours. Long
polling has no such answer: the notice is a message through the replier, paced like every
reply. Either way a user hears it at most once a minute (`WorkQueue.busy_notice_due`), in
their Telegram's language when we speak it, else the config's `locale`.
"""

from __future__ import annotations

from typing import Any

from telegram import Update

from bot.adapters.answering import notice_message
from bot.adapters.telegram.members import user_locale
from bot.adapters.telegram.reply import Replier
from bot.adapters.telegram.updates import asker
from bot.adapters.work import BUSY, WorkQueue
from bot.core.models import Format, Locale
from bot.core.render.renderer import RenderedMessage, Renderer


class TelegramBusy:
    def __init__(
        self, work: WorkQueue, renderer: Renderer, default_locale: Locale, replier: Replier
    ) -> None:
        self.work = work
        self.renderer = renderer
        self.default_locale = default_locale
        self.replier = replier

    def _notice(self, update: Update) -> RenderedMessage:
        locale = user_locale(update.effective_user) or self.default_locale
        return notice_message(self.renderer, BUSY, Format.TELEGRAM, locale)

    def webhook_answer(self, update: Update) -> dict[str, Any] | None:
        """The webhook response for a refused message or button press; None when the user
        was told within the last minute."""
        if not self.work.busy_notice_due(asker(update)):
            return None
        notice = self._notice(update)
        query = update.callback_query
        if query is not None:
            return {"method": "answerCallbackQuery", "callback_query_id": query.id,
                    "text": notice.text}  # fmt: skip
        message = update.effective_message
        assert message is not None
        reply = {"message_id": message.message_id, "allow_sending_without_reply": True}
        return {"method": "sendMessage", "chat_id": message.chat.id, **notice.payload,
                "reply_parameters": reply}  # fmt: skip

    def tell(self, update: Update) -> None:
        """Long polling: the busy notice as a message (or the button's answer) of its own."""
        notice = self._notice(update)
        query = update.callback_query
        if query is not None:
            self.work.tell_busy(asker(update), self._answer_query(update, notice.text))
            return
        message = update.effective_message
        if message is not None:
            self.work.tell_busy(asker(update), self._reply(message.chat.id, message.id, notice))

    async def _answer_query(self, update: Update, text: str) -> None:
        assert update.callback_query is not None
        await update.callback_query.answer(text=text)

    async def _reply(self, chat_id: int, message_id: int, notice: RenderedMessage) -> None:
        await self.replier.send(str(chat_id), [notice], reply_to=message_id)
