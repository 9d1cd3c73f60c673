"""A digest entry's reading buttons in Telegram: Read, Full report (the entry's row), Snooze
and Mute tag (its ⋯ menu, entry_menu.py), and the digest's "+N more" (callback_data
`read:REF`, `snooze:REF`, `mute:TAG`, `report:REF`, `more:RUN`; bot/core/render/actions.py).

The presser hears the outcome in the button's answer (answerCallbackQuery); what the whole
chat should know and a "+N more" page go to the chat as a reply to the digest message, and so
does the full report, as one message paging through its sections (report_pager.py). Mute asks
Telegram whether the presser is an admin.

Read changes the digest message itself: the entry's first line ends in "✅ @alice, @bob" (who
read it in this chat; editMessageText, when the text still fits 4,096 characters) and its
✅ button leaves the keyboard (the row becomes `📄 #7422 · ⋯ #7422`). The chat hears of a PR's
first Read only ("✅ #7422 read by @alice", a reply to the digest); a later reader's press
says in its answer who read it, and posts nothing.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, Final

from telegram import CallbackQuery, InlineKeyboardMarkup, LinkPreviewOptions, Message, Update
from telegram.error import TelegramError
from telegram.ext import CallbackQueryHandler, ContextTypes

from bot.adapters.answering import answer_messages
from bot.adapters.base import AdapterDeps
from bot.adapters.telegram.keyboard import (
    ChatFactory,
    PressHandler,
    presser_is_admin,
    presser_name,
)
from bot.adapters.telegram.reply import Replier
from bot.adapters.telegram.report_pager import ReportPager
from bot.adapters.telegram.updates import TelegramApp
from bot.chat.answers import Chat, Notice, SectionAnswer, render_notice
from bot.chat.reading import ReadMessage, key_of
from bot.core.models import Format, Locale
from bot.core.render.actions import EntryAction, parse_action
from bot.core.render.labels import labels
from bot.core.render.limits.telegram import TELEGRAM_ALERT_MAX, TELEGRAM_MAX_UTF16
from bot.core.render.split import utf16_len
from bot.core.render.telegram import defang_mentions, html_to_plain
from bot.core.render.views import github_pr_url
from bot.logs import log

logger = logging.getLogger("prdigest.telegram")

# Every action but ⋯ (`menu:REF`), which only edits the keyboard (entry_menu.py), and a full
# report's sections (`sec:`), which only edit the report's message (report_pager.py).
_OWN_HANDLERS: Final = (EntryAction.MENU, EntryAction.SECTION)
_ACTIONS: Final = [action.value for action in EntryAction if action not in _OWN_HANDLERS]
PATTERN: Final = "^(" + "|".join(_ACTIONS) + "):"

READ_PREFIX: Final = EntryAction.READ.value + ":"

Context = ContextTypes.DEFAULT_TYPE
Rows = list[list[dict[str, Any]]]


class EntryButtons(PressHandler):
    def __init__(self, deps: AdapterDeps, replier: Replier, chat_at: ChatFactory) -> None:
        super().__init__(deps, replier, chat_at)
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
        if action is EntryAction.READ:
            await self._read(query, message, chat, argument)
            return
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

    async def _read(self, query: CallbackQuery, message: Message, chat: Chat, ref: str) -> None:
        """✅ Read: the presser hears who read the PR here; the digest shows it; the chat gets
        the line of a PR's first Read."""
        outcome = await self.service.read(ref, chat, str(message.message_id))
        log(logger, "telegram.entry_button", action=EntryAction.READ.value, chat=chat.chat_id)
        told = render_notice(self.renderer, outcome.told, Format.TEXT, chat.locale).text
        read = outcome.line is not None or bool(outcome.again)
        await query.answer(told[:TELEGRAM_ALERT_MAX], show_alert=not read)
        if outcome.message is not None:
            await show_read(query, message, outcome.message, chat.locale)
        if outcome.line is not None:
            rendered = await answer_messages(
                self.renderer, outcome.line, Format.TELEGRAM, chat.locale
            )
            await self.replier.send(chat.chat_id, rendered, reply_to=message.message_id)


def read_rows(rows: Sequence[Sequence[Mapping[str, Any]]], sent: ReadMessage) -> Rows:
    """The keyboard without the ✅ Read buttons of the PRs read here (a row left with no
    button goes); any other button, an open ⋯ menu's too, stays as it is."""

    def read(button: Mapping[str, Any]) -> bool:
        data = str(button.get("callback_data", ""))
        key = key_of(data.removeprefix(READ_PREFIX), sent.keys)
        return data.startswith(READ_PREFIX) and bool(sent.readers.get(key or ""))

    kept = [[dict(button) for button in row if not read(button)] for row in rows]
    return [row for row in kept if row]


def read_text(text: str, sent: ReadMessage, mark: str) -> str | None:
    """The digest's text as posted, each read entry's first line (the one linking its PR)
    ending in `mark` ("✅ {names}") with its readers; None when it would pass 4,096."""
    for key, names in sent.readers.items():
        repo, _, number = key.rpartition("#")
        url = github_pr_url(repo, int(number)) if number.isascii() and number.isdigit() else None
        at = text.find(f'<a href="{html.escape(url)}">') if url and names else -1
        if at < 0:
            continue
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        shown = defang_mentions(html.escape(mark.format(names=", ".join(names)), quote=False))
        text = f"{text[:end]} · {shown}{text[end:]}"
    return text if utf16_len(html_to_plain(text)) <= TELEGRAM_MAX_UTF16 else None


async def show_read(
    query: CallbackQuery, message: Message, sent: ReadMessage, locale: Locale
) -> None:
    """Edit the digest message: its text with the marks where it fits (else only its
    keyboard), and its keyboard without the read PRs' ✅ buttons."""
    markup = message.reply_markup
    rows = (
        [[button.to_dict() for button in row] for row in markup.inline_keyboard] if markup else []
    )
    shown = read_rows(rows, sent)
    keyboard = InlineKeyboardMarkup.de_json({"inline_keyboard": shown}, query.get_bot())
    text = read_text(str(sent.payload.get("text", "")), sent, labels(locale)["read_by"])
    try:
        if text is not None and sent.payload.get("parse_mode") == "HTML":
            preview = LinkPreviewOptions(is_disabled=True)
            await query.edit_message_text(
                text, parse_mode="HTML", reply_markup=keyboard, link_preview_options=preview
            )
        elif shown != rows:
            await query.edit_message_reply_markup(keyboard)
    except TelegramError as exc:  # "message is not modified" when a reader pressed twice at once
        log(logger, "telegram.read_edit_failed", logging.WARNING, reason=str(exc)[:200])
