"""A digest entry's reading buttons in Slack, and the ✅ reaction on a digest message.

Buttons (and overflow options) have an action_id starting with ENTRY_ACTION_PREFIX and carry
`read:REF`, `snooze:REF`, `mute:TAG`, `report:REF`, `more:RUN` or `readall:ROW`
(bot/core/render/actions.py) as the element's `value` or the chosen option's. Snooze and Mute
are told to the channel in the digest message's thread; a refusal only to the presser;
"+N more" posts the next page to the channel; Full report opens a modal.

Read changes the digest message itself (chat.update): the entry ends in "✅ alice, bob" (who
read it in this channel) and its Read button goes. The thread gets one line per PR, at its
first Read ("✅ #7422 read by alice"); a later reader's name is added to that line.

A `reaction_added` ✅ (white_check_mark, heavy_check_mark) on a digest message of one PR marks
it read the same way; on a message of several, the reacting user is asked first (an ephemeral
"Mark all N PRs in this message read?" whose button carries `readall:ROW`).
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
from bot.adapters.slack.replies import (
    Respond,
    post_all,
    post_ephemeral,
    post_read_line,
    read_blocks,
    read_marks,
    respond_all,
    respond_replacing,
    update_message,
    update_read_line,
)
from bot.adapters.slack.report_modal import NEXT_PAGE, show_report, view_metadata
from bot.chat.answers import Answer, Chat, Notice, SectionAnswer, render_notice
from bot.chat.reading import ReadMessage, ReadOutcome
from bot.core.models import Format, Locale
from bot.core.render.actions import (
    ENTRY_ACTION_PREFIX,
    EntryAction,
    action_data,
    page_number,
    parse_action,
)
from bot.core.render.labels import labels
from bot.core.render.renderer import RenderedMessage
from bot.logs import log

logger = logging.getLogger("prdigest.slack")

READ_REACTIONS: Final = frozenset({"white_check_mark", "heavy_check_mark"})


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
        if parsed[0] in (EntryAction.READ, EntryAction.READALL):
            await self._read(body, parsed, chat, respond)
            return
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
        shown = await self.host.service.message_shown(chat, str(item.get("ts", "")))
        log(logger, "slack.reaction_read", chat=chat.chat_id, prs=len(shown.keys if shown else ()))
        if shown is None or not shown.keys:
            return
        if len(shown.keys) == 1:  # nothing to ask: the one PR is read
            outcome = await self.host.service.read_all(chat, str(shown.row))
            await self._show_read(outcome, chat, shown.external_id)
            return
        ask = Notice("read_all_ask", {"n": str(len(shown.keys))})
        message = render_notice(self.host.renderer, ask, Format.SLACK, chat.locale)
        button = {
            "type": "button",
            "text": {"type": "plain_text", "text": labels(chat.locale)["button_read_all"]},
            "action_id": ENTRY_ACTION_PREFIX + EntryAction.READALL.value,
            "value": action_data(EntryAction.READALL, str(shown.row)),
        }
        blocks = [*message.payload.get("blocks", []), {"type": "actions", "elements": [button]}]
        asked = RenderedMessage({**message.payload, "blocks": blocks}, message.text)
        await post_ephemeral(self.host.users.client, chat.chat_id, chat.user_id, asked)

    async def _read(
        self, body: dict[str, Any], parsed: tuple[EntryAction, str], chat: Chat, respond: Respond
    ) -> None:
        """✅ Read on a message, or "mark all read" on the question a reaction asked."""
        action, argument = parsed
        container = body.get("container") or {}
        ts = str(container.get("message_ts") or "")
        if action is EntryAction.READ:
            outcome = await self.host.service.read(argument, chat, ts)
        else:
            outcome = await self.host.service.read_all(chat, argument)
        log(logger, "slack.entry_action", action=action.value, chat=chat.chat_id)
        renderer = self.host.renderer
        told = render_notice(renderer, outcome.told, Format.SLACK, chat.locale)
        if outcome.line is None and not outcome.again:  # nothing read: why, to the presser
            await respond_all(respond, [told], public=False, where="entry action")
            return
        if action is EntryAction.READALL:
            await respond_replacing(respond, told, where="read all")
        thread = outcome.message.external_id if outcome.message is not None else ts
        await self._show_read(outcome, chat, thread)

    async def _show_read(self, outcome: ReadOutcome, chat: Chat, thread: str) -> None:
        """The digest message shows who read what; the thread gets the line of the PRs read
        for the first time, and a PR's line names every reader."""
        client, renderer = self.host.users.client, self.host.renderer
        if outcome.message is not None:
            await self._update_digest(chat.chat_id, outcome.message, chat.locale)
        if outcome.line is not None:
            line = render_notice(renderer, outcome.line, Format.SLACK, chat.locale)
            await post_read_line(client, chat.chat_id, thread, line, list(outcome.first))
        for pr, notice in outcome.again:
            line = render_notice(renderer, notice, Format.SLACK, chat.locale)
            await update_read_line(client, chat.chat_id, thread, pr, line)

    async def _update_digest(self, channel: str, message: ReadMessage, locale: Locale) -> None:
        marks = read_marks(message.readers, labels(locale)["read_by"])
        blocks = message.payload.get("blocks")
        if not marks or not isinstance(blocks, list):
            return
        shown = {**message.payload, "blocks": read_blocks(blocks, message.keys, marks)}
        await update_message(self.host.users.client, channel, message.external_id, shown)
