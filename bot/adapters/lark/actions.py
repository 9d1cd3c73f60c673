"""A digest card's buttons (`card.action.trigger`): what each press does, answered at once.

Feishu waits at most 3 seconds for the callback's answer, which may carry a toast and the
card's new content. So:

- ✅ Read marks the PR read here and answers with the card as it now reads (the entry shows
  "✅ alice, bob" and its Read button is gone; the card is shared, so everyone sees it), and
  a toast saying who read it. The PR's first Read also gets a line in the card's thread.
- Snooze and Mute (the ⋯ menu) answer with a toast saying what was done, or why not.
- 📄 Full report posts the report's pager card in the card's thread (report_pager.py); a
  press on the pager answers with the pager at that section or page, in place.
- Risks, Files and ▶ "+N more" answer at once; the section or the next page follows as
  cards in the card's thread (its quote, in a one-to-one chat), through the work queue like
  any answer.

The values are the ones every platform's buttons carry (bot/core/render/actions.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any

from bot.adapters.answering import answer_messages
from bot.adapters.lark.handler import LarkHandler
from bot.adapters.lark.members import P2P
from bot.adapters.lark.messages import event_str
from bot.adapters.lark.read_card import read_card, read_marks
from bot.adapters.lark.report_pager import pager_card, pager_message
from bot.chat.answers import Answer, Chat, Notice, Reply, render_notice
from bot.chat.commands import parse
from bot.core.models import Format, Platform, Section
from bot.core.render.actions import (
    SECTION_NAMES,
    EntryAction,
    parse_action,
    section_argument,
)
from bot.core.render.labels import labels
from bot.core.render.lark import DATA_KEY
from bot.logs import log

logger = logging.getLogger("prdigest.lark")

Response = dict[str, Any]
TOAST_MAX = 200  # characters of a toast; its words are short, a long reason is cut
NOTHING_TO_DO = Notice("button_unknown")


def toast(text: str, kind: str = "info") -> Response:
    return {"toast": {"type": kind, "content": text[:TOAST_MAX]}}


def pressed_value(action: Mapping[str, Any]) -> str:
    """What the press carries: a button's `{"data": …}`, or the ⋯ option chosen."""
    option = action.get("option")
    if isinstance(option, str) and option:
        return option
    value = action.get("value")
    data = value.get(DATA_KEY) if isinstance(value, Mapping) else None
    return data if isinstance(data, str) else ""


class LarkActions(LarkHandler):
    async def on_action(self, event: Mapping[str, Any]) -> Response:
        user = event_str(event, "operator", "open_id")
        chat_id = event_str(event, "context", "open_chat_id")
        message_id = event_str(event, "context", "open_message_id")
        action = event.get("action")
        if not user or not chat_id or not message_id or not isinstance(action, Mapping):
            return {}
        facts = await self.members.facts(chat_id)
        chat = await self.service.chat_at(
            Platform.LARK,
            chat_id,
            user,
            private=facts.mode == P2P,
            is_admin=partial(self.members.is_admin, chat_id, user),
            user_name=await self.members.name_of(user),
        )
        value = pressed_value(action)
        log(logger, "lark.card_action", chat=chat_id, action=value.partition(":")[0])
        return await self._press(value, chat, message_id)

    async def _press(self, value: str, chat: Chat, message_id: str) -> Response:
        name, _, ref = value.partition(":")
        if name in {Section.RISKS.value, Section.FILES.value} and ref:
            self._later(chat, message_id, partial(self._section, ref, Section(name), chat))
            return {}
        parsed = parse_action(value)
        if parsed is None:
            return self._told(NOTHING_TO_DO, chat, "warning")
        action, argument = parsed
        if action is EntryAction.READ:
            return await self._read(argument, chat, message_id)
        if action is EntryAction.REPORT:
            return await self._report(argument, chat, message_id)
        if action is EntryAction.SECTION:
            return await self._flip(argument, chat)
        if action is EntryAction.MORE:
            self._later(
                chat, message_id, partial(self.service.answer_action, action, argument, chat)
            )
            return {}
        reply = (await self.service.answer_action(action, argument, chat)).reply
        return self._told(reply if isinstance(reply, Notice) else NOTHING_TO_DO, chat)

    async def _read(self, argument: str, chat: Chat, message_id: str) -> Response:
        outcome = await self.service.read(argument, chat, message_id)
        read = outcome.line is not None or bool(outcome.again)
        response = self._told(outcome.told, chat, "success" if read else "info")
        shown = outcome.message
        card = shown.payload.get("card") if shown is not None else None
        if shown is not None and isinstance(card, Mapping):
            marks = read_marks(shown.readers, labels(chat.locale)["read_by"])
            response["card"] = {"type": "raw", "data": read_card(card, shown.keys, marks)}
        line = outcome.line
        if line is not None:
            self._later(chat, message_id, partial(_answered, line))
        return response

    async def _report(self, ref: str, chat: Chat, message_id: str) -> Response:
        """The pager card on the report's summary, in the pressed card's thread."""
        found = await self.service.find_report(ref)
        if isinstance(found, Notice):
            return self._told(found, chat, "warning")
        shown = await pager_message(self.renderer, found, Section.SUMMARY, 0, chat.locale)

        async def job() -> None:
            await self.replier.reply(chat.chat_id, message_id, [shown], in_thread=not chat.private)

        self.work.submit(chat.user_id, job, chat=chat.chat_id)
        return {}

    async def _flip(self, argument: str, chat: Chat) -> Response:
        """A pager's section or page: the pager card, answered in place."""
        wanted = section_argument(argument)
        found = await self.service.find_report(wanted[0]) if wanted is not None else NOTHING_TO_DO
        if wanted is None or isinstance(found, Notice) or wanted[1] not in SECTION_NAMES:
            return self._told(found if isinstance(found, Notice) else NOTHING_TO_DO, chat)
        card = await asyncio.to_thread(
            pager_card, self.renderer, found, Section(wanted[1]), wanted[2], chat.locale
        )
        return {"card": {"type": "raw", "data": card}}

    async def _section(self, ref: str, section: Section, chat: Chat) -> Answer:
        return await self.service.answer_text(lambda: parse("pr", f"{ref} {section.value}"), chat)

    def _told(self, notice: Notice, chat: Chat, kind: str = "info") -> Response:
        text = render_notice(self.renderer, notice, Format.TEXT, chat.locale).text
        return toast(text, kind)

    def _later(self, chat: Chat, message_id: str, answer: Callable[[], Awaitable[Answer]]) -> None:
        """The answer's cards in the pressed card's thread, through the work queue."""

        async def job() -> None:
            await self._post(chat, message_id, (await answer()).reply)

        self.work.submit(chat.user_id, job, chat=chat.chat_id)

    async def _post(self, chat: Chat, message_id: str, reply: Reply) -> None:
        rendered = await answer_messages(self.renderer, reply, Format.LARK, chat.locale)
        await self.replier.reply(chat.chat_id, message_id, rendered, in_thread=not chat.private)


async def _answered(notice: Notice) -> Answer:
    return Answer(notice)
