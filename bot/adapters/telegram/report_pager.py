"""The Full report in Telegram: one message that pages through the whole report.

📄 (`report:REF`) posts one message, a reply to the digest: the report's summary and a
keyboard of its sections (摘要 · 动机 · 实现 · 文件 · 评论 · 风险 · 关联). A section's button
(`sec:REF:SECTION:PAGE`) edits that same message in place (editMessageText) to show the
section; a section longer than one message is paged within it (‹ 1/3 ›), each page within
Telegram's limits as the renderer measures them. In a group the keyboard also offers
📩 Send privately (`sec:REF:dm:0`): the same pager in the presser's private chat, once they
have started the bot (Telegram refuses a bot's first message to a user); if not, an alert
tells them to start it.

The message holds its own state (the section and page are in its buttons), so any replica
can take the next press. Which sections a report has and what a page holds are the renderer's
(bot/core/render/report_tabs.py); this module only draws the keyboard and sends or edits.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Final

from telegram import (
    CallbackQuery,
    InlineKeyboardMarkup,
    LinkPreviewOptions,
    Message,
    Update,
)
from telegram.constants import ParseMode
from telegram.error import BadRequest
from telegram.ext import CallbackQueryHandler, ContextTypes

from bot.adapters.telegram.keyboard import PressHandler, presser_name
from bot.adapters.telegram.updates import TelegramApp
from bot.chat.answers import Chat, Notice, render_notice
from bot.chat.messages import StoredReport
from bot.chat.service import nobody_is_admin
from bot.core.delivery.port import Blocked, Gone, Sent
from bot.core.models import Format, Locale, Section
from bot.core.render.actions import (
    PAGE_MAX,
    PRIVATE_COPY,
    SECTION_NAMES,
    EntryAction,
    parse_action,
    section_argument,
    section_data,
)
from bot.core.render.flow import RenderedMessage
from bot.core.render.labels import labels
from bot.core.render.limits.telegram import TELEGRAM_ALERT_MAX, TELEGRAM_MAX_CALLBACK_BYTES
from bot.core.render.renderer import Renderer
from bot.core.render.report_tabs import Shown, pager_rows, report_tabs, tab_pages
from bot.core.render.telegram import Rows
from bot.logs import log

logger = logging.getLogger("prdigest.telegram")

PATTERN: Final = f"^{EntryAction.SECTION.value}:"
TABS_PER_ROW: Final = 4  # 7 sections: two rows a phone shows without cutting the labels
NOT_MODIFIED: Final = "message is not modified"  # Telegram's answer to an edit that changes nothing
# The longest SECTION a button carries: with PAGE_MAX, the most room a REF has to share.
_LONGEST_SECTION: Final = max(SECTION_NAMES | {PRIVATE_COPY}, key=len)

Context = ContextTypes.DEFAULT_TYPE


def button_ref(ref: str) -> str:
    """REF as the buttons carry it: whole when every button's data fits Telegram's 64 bytes,
    else its number alone (which `/pr` also takes)."""
    longest = section_data(ref, _LONGEST_SECTION, PAGE_MAX)
    if len(longest.encode()) <= TELEGRAM_MAX_CALLBACK_BYTES:
        return ref
    return ref.rpartition("#")[2]


def pager_keyboard(
    ref: str, tabs: Sequence[Section], shown: Shown, locale: Locale, offer_private: bool
) -> Rows:
    """The pager's sections and pages (report_tabs.pager_rows), and 📩 Send privately when
    `offer_private`."""
    carried = button_ref(ref)
    rows = [
        [{"text": text, "callback_data": data} for text, data in row]
        for row in pager_rows(carried, tabs, shown, locale, TABS_PER_ROW)
    ]
    if offer_private:
        text = labels(locale)["button_send_private"]
        rows.append([{"text": text, "callback_data": section_data(carried, PRIVATE_COPY, 0)}])
    return rows


def pager_message(
    renderer: Renderer, item: StoredReport, tab: Section, page: int, chat: Chat
) -> RenderedMessage:
    """Page `page` of `tab` (the last one when `page` is past it) with the pager's keyboard;
    a group's also offers to send the report privately."""
    pages = tab_pages(renderer, item, tab, Format.TELEGRAM, chat.locale)
    page = min(page, len(pages) - 1)
    shown = Shown(tab, page, len(pages))
    rows = pager_keyboard(item.report.ref, report_tabs(item), shown, chat.locale, not chat.private)
    payload = {**pages[page].payload, "reply_markup": {"inline_keyboard": rows}}
    return RenderedMessage(payload=payload, text=pages[page].text)


class ReportPager(PressHandler):
    def register(self, app: TelegramApp) -> None:
        """Before the Risks/Files buttons' handler: the first matching handler takes a press."""
        app.add_handler(CallbackQueryHandler(self.on_press, pattern=PATTERN))

    async def _message(
        self, item: StoredReport, tab: Section, page: int, chat: Chat
    ) -> RenderedMessage:
        # A huge report costs CPU to render: off the event loop, like every answer.
        return await asyncio.to_thread(pager_message, self.renderer, item, tab, page, chat)

    async def post(
        self, query: CallbackQuery, chat: Chat, item: StoredReport, reply_to: int
    ) -> None:
        """The Full report button: the pager on the summary, a reply to the digest."""
        await query.answer()
        shown = await self._message(item, Section.SUMMARY, 0, chat)
        await self.replier.send(chat.chat_id, [shown], reply_to=reply_to)
        log(logger, "telegram.report_pager", chat=chat.chat_id, ref=item.report.ref)

    async def on_press(self, update: Update, context: Context) -> None:
        """A section, a page or 📩 pressed on a pager message."""
        query = update.callback_query
        message = query.message if query is not None else None
        parsed = parse_action(query.data or "") if query is not None else None
        wanted = section_argument(parsed[1]) if parsed is not None else None
        if query is None or wanted is None or not isinstance(message, Message):
            if query is not None:
                await query.answer()  # not a press this keyboard carries: nothing to show
            return
        ref, name, page = wanted
        user = query.from_user
        chat = await self.chat_at(
            message.chat.id, user.id, user, presser_name(user), nobody_is_admin
        )
        found = await self.service.find_report(ref)
        if isinstance(found, Notice):
            await self._alert(query, found, chat.locale)
        elif name == PRIVATE_COPY:
            await self._send_private(query, found)
        else:
            await query.answer()
            shown = await self._message(found, Section(name), page, chat)
            await _edit(query, shown)

    async def _send_private(self, query: CallbackQuery, item: StoredReport) -> None:
        """The pager in the presser's private chat; an alert when Telegram refuses it (a user
        who never started the bot, 403, or a chat it does not know)."""
        user = query.from_user
        private = await self.chat_at(user.id, user.id, user, presser_name(user), nobody_is_admin)
        shown = await self._message(item, Section.SUMMARY, 0, private)
        outcome = await self.replier.send_one(private.chat_id, dict(shown.payload))
        log(logger, "telegram.report_private", sent=isinstance(outcome, Sent), ref=item.report.ref)
        if isinstance(outcome, Sent):
            told = Notice("report_sent_private")
            await query.answer(self._text(told, private.locale)[:TELEGRAM_ALERT_MAX])
        elif isinstance(outcome, Blocked | Gone):
            await self._alert(query, Notice("report_start_bot"), private.locale)
        else:
            await self._alert(query, Notice("error"), private.locale)

    def _text(self, notice: Notice, locale: Locale) -> str:
        return render_notice(self.renderer, notice, Format.TEXT, locale).text

    async def _alert(self, query: CallbackQuery, notice: Notice, locale: Locale) -> None:
        await query.answer(self._text(notice, locale)[:TELEGRAM_ALERT_MAX], show_alert=True)


async def _edit(query: CallbackQuery, shown: RenderedMessage) -> None:
    """The pager message becomes `shown` (the same section and page pressed again changes
    nothing, which Telegram refuses: left as it is)."""
    payload = shown.payload
    markup = InlineKeyboardMarkup.de_json(payload["reply_markup"], query.get_bot())
    try:
        await query.edit_message_text(
            str(payload["text"]),
            parse_mode=ParseMode.HTML,
            reply_markup=markup,
            link_preview_options=LinkPreviewOptions(is_disabled=True),
        )
    except BadRequest as exc:
        if NOT_MODIFIED not in str(exc).lower():
            raise
