"""A digest entry's reading buttons in Slack, and the ✅ reaction on a digest message.

Buttons (and overflow options) have an action_id starting with ENTRY_ACTION_PREFIX and carry
`read:REF`, `snooze:REF`, `mute:TAG`, `report:REF` or `more:RUN` (bot/core/render/actions.py)
as the element's `value` or the chosen option's. Read, Snooze and Mute are told to the
channel in the digest message's thread ("✅ #7422 read by alice"); a refusal only to the
presser; "+N more" posts the next page to the channel; Full report opens a modal.

A `reaction_added` ✅ (white_check_mark) on a digest message marks every PR it shows read.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from functools import partial
from typing import Any, Final

from slack_bolt.async_app import AsyncApp

from bot.adapters.answering import UNAVAILABLE, answer_messages, notice_message
from bot.adapters.slack.host import Ack, ListenerHost
from bot.adapters.slack.replies import Respond, post_all, respond_all
from bot.adapters.slack.report_modal import NEXT_PAGE, show_report, view_metadata
from bot.chat.answers import Answer, Chat, Notice, SectionAnswer, render_notice
from bot.core.models import Format
from bot.core.render.actions import (
    ENTRY_ACTION_PREFIX,
    EntryAction,
    page_number,
    parse_action,
)
from bot.logs import log

logger = logging.getLogger("prdigest.slack")

READ_REACTIONS: Final = frozenset({"white_check_mark"})


def _value(action: dict[str, Any]) -> str:
    """A button's value, or the chosen overflow option's."""
    option = action.get("selected_option")
    if isinstance(option, dict):
        return str(option.get("value", ""))
    return str(action.get("value", ""))


def _user_name(body: dict[str, Any]) -> str:
    user = body.get("user")
    if isinstance(user, dict):
        return str(user.get("username") or user.get("name") or "")
    return ""


class EntryActions:
    def __init__(self, host: ListenerHost) -> None:
        self.host = host

    def register(self, app: AsyncApp) -> None:
        app.action(re.compile("^" + re.escape(ENTRY_ACTION_PREFIX)))(self.on_action)
        app.action(NEXT_PAGE)(self.on_next_page)
        app.event("reaction_added")(self.on_reaction)

    async def on_action(
        self,
        ack: Ack,
        body: dict[str, Any],
        action: dict[str, Any],
        respond: Respond,
        context: dict[str, Any],
    ) -> None:
        await ack()
        self.host.spawn(context, partial(self._act, body, action, respond))

    async def on_next_page(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], context: dict[str, Any]
    ) -> None:
        await ack()
        self.host.spawn(context, partial(self._turn_page, body, action))

    async def on_reaction(self, event: dict[str, Any], context: dict[str, Any]) -> None:
        item = event.get("item")
        if event.get("reaction") not in READ_REACTIONS or not isinstance(item, dict):
            return
        if item.get("type") != "message":
            return
        self.host.spawn(context, partial(self._reacted, event, item))

    async def _chat(self, body: dict[str, Any]) -> Chat:
        name = _user_name(body)
        chat = await self.host.chat(body, name)
        if not name:  # no name in the payload: ask Slack
            name = await self.host.users.display_name(chat.user_id) or chat.user_id
            chat = dataclasses.replace(chat, user_name=name)
        return chat

    async def _act(
        self, body: dict[str, Any], action: dict[str, Any], respond: Respond, store_down: bool
    ) -> None:
        parsed = parse_action(_value(action))
        if parsed is None:
            return
        if store_down:
            message = notice_message(
                self.host.renderer, UNAVAILABLE, Format.SLACK, self.host.default_locale
            )
            await respond_all(respond, [message], public=False, where="entry action")
            return
        chat = await self._chat(body)
        answer = await self.host.service.answer_action(*parsed, chat)
        log(logger, "slack.entry_action", action=parsed[0].value, chat=chat.chat_id)
        if parsed[0] is EntryAction.REPORT and isinstance(answer.reply, SectionAnswer):
            trigger = str(body.get("trigger_id", ""))
            client, renderer = self.host.users.client, self.host.renderer
            item = answer.reply.item
            if await show_report(client, renderer, item, chat.locale, trigger_id=trigger):
                return  # else (the trigger expired): the report as an answer, to the presser
        await self._tell(body, answer, chat, respond)

    async def _tell(
        self, body: dict[str, Any], answer: Answer, chat: Chat, respond: Respond
    ) -> None:
        messages = await answer_messages(
            self.host.renderer, answer.reply, Format.SLACK, chat.locale
        )
        if not answer.public:
            await respond_all(respond, messages, public=False, where="entry action")
            return
        container = body.get("container") or {}
        thread = str(container.get("message_ts") or "") or None
        in_thread = isinstance(answer.reply, Notice)  # a page of "+N more" goes to the channel
        await post_all(
            self.host.users.client, chat.chat_id, messages, thread if in_thread else None
        )

    async def _turn_page(
        self, body: dict[str, Any], action: dict[str, Any], store_down: bool
    ) -> None:
        view = body.get("view")
        if store_down or not isinstance(view, dict):
            return
        ref, locale = view_metadata(view)
        value = str(action.get("value", ""))
        page = page_number(value)
        if page is None:  # a forged or garbled value: no page of ours
            log(logger, "slack.next_page_refused", logging.WARNING, value=value[:40])
            return
        found = await self.host.service.find_report(ref)
        if isinstance(found, Notice):
            return
        await show_report(
            self.host.users.client, self.host.renderer, found, locale, view=view, page=page
        )

    async def _reacted(self, event: dict[str, Any], item: dict[str, Any], store_down: bool) -> None:
        if store_down:
            return
        payload = {"channel": item.get("channel"), "user": event.get("user")}
        chat = await self._chat(payload)
        keys = await self.host.service.read_message(chat, str(item.get("ts", "")))
        log(logger, "slack.reaction_read", chat=chat.chat_id, prs=len(keys))
        if not keys:
            return
        notice = Notice("reaction_read", {"refs": ", ".join(keys), "user": chat.user_name})
        message = render_notice(self.host.renderer, notice, Format.SLACK, chat.locale)
        await post_all(self.host.users.client, chat.chat_id, [message], str(item.get("ts")))
