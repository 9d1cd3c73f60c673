"""Bolt listeners: `/pr`, `app_mention`, the digest's "Risks"/"Files" buttons, event dedupe.

Each listener acknowledges first (Slack wants an answer within 3 s), then parses with the
shared command table, answers through the shared Answerer and renders with the shared
renderer. Identity and place come only from the signed request: `user_id` decides who asks,
`channel_id` is the only chat a command may change.

Answers wait in the platform's bounded work queue (`bot/adapters/work.py`). One it does not
take (full, or the user over their rate) is answered "busy, try again in a minute" at once:
a slash command in its ack (Slack shows the ack's text to the user alone), a button and a
mention in an ephemeral message, once a minute at most. One taken and then pushed out of the
queue by a newcomer's (see work.py) is told the same way as a button.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import cached_property, partial
from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.adapters.answering import UNAVAILABLE, answer_messages
from bot.adapters.base import AdapterDeps, is_private
from bot.adapters.slack.ack_gate import AckGate
from bot.adapters.slack.entry_actions import EntryActions
from bot.adapters.slack.home import SlackHome
from bot.adapters.slack.host import Answering
from bot.adapters.slack.modal import SlackPicker
from bot.adapters.slack.replies import (
    Respond,
    clean_text,
    post_all,
    post_ephemeral,
    respond_all,
)
from bot.adapters.slack.users import SlackUsers
from bot.adapters.work import BUSY, Admission, Work, WorkQueue
from bot.chat.answers import Answer, Chat, Notice, render_notice
from bot.chat.commands import (
    button_request,
    opens_picker,
    parse_mention,
    parse_pr_text,
)
from bot.chat.requests import Ask, Request, Verb
from bot.chat.service import ChatService, nobody_is_admin
from bot.core.models import Format, Platform, Section
from bot.logs import log

logger = logging.getLogger("prdigest.slack")

SLASH_COMMAND = "/pr"
BUTTON_SECTIONS = {"pr_risks": Section.RISKS, "pr_files": Section.FILES}
# Set in bolt's context by the adapter when the store could not say whether a request is new:
# nothing is handled, the user hears that the bot is temporarily unavailable.
ONCE_KEYS = "prdigest_once_keys"  # dedupe keys an answer records first (signature, event id)

ChatReady = Callable[[Chat], Awaitable[None]]


def _nothing() -> None:
    """No one to tell."""


class SlackListeners:
    def __init__(
        self, deps: AdapterDeps, users: SlackUsers, gate: AckGate, work: WorkQueue
    ) -> None:
        self.gate = gate
        self.work = work
        self.service: ChatService = deps.chat
        self.renderer = deps.renderer
        self.default_locale = deps.default_locale
        self.users = users
        self.clock = deps.clock
        self.picker = SlackPicker(self)  # `/pr subscribe` alone: the modal
        self.home = SlackHome(self, self.picker)
        self.entry_actions = EntryActions(self)  # Read, Snooze, Mute, Full report, +N more, ✅

    def register(self, app: AsyncApp) -> None:
        app.middleware(self.note_event_id)
        app.command(SLASH_COMMAND)(self.on_pr_command)
        app.event("app_mention")(self.on_mention)
        for action_id in BUTTON_SECTIONS:
            app.action(action_id)(self.on_button)
        self.picker.register(app)
        self.home.register(app)
        self.entry_actions.register(app)

    # -- middleware ------------------------------------------------------------------------

    async def note_event_id(
        self,
        body: dict[str, Any],
        context: dict[str, Any],
        next_: Callable[[], Awaitable[None]],
    ) -> None:
        """Slack retries an event it thinks we missed: its id joins the keys the answer
        records before it runs (`_once`), so a retry is acknowledged and does nothing."""
        event_id = body.get("event_id") if isinstance(body, dict) else None
        if isinstance(event_id, str) and event_id:
            context[ONCE_KEYS] = [*context.get(ONCE_KEYS, ()), f"slack:{event_id}"]
        await next_()

    # -- listeners: acknowledge, then answer in a tracked task -------------------------------

    async def on_pr_command(
        self,
        ack: Callable[..., Awaitable[Any]],
        command: dict[str, Any],
        respond: Respond,
        context: dict[str, Any],
    ) -> None:
        user = str(command.get("user_id") or "")
        bumped = partial(self._tell_busy, user, partial(self._busy_respond, respond))
        if self.spawn(context, partial(self._answer_command, command, respond), bumped):
            await ack()
            return
        await ack(**self.busy_ack)

    @cached_property
    def busy_ack(self) -> dict[str, Any]:
        """A refused slash command's ack: "busy", shown to its user alone. Rendered once: under
        a flood most commands get it."""
        busy = render_notice(self.renderer, BUSY, Format.SLACK, self.default_locale)
        return {"response_type": "ephemeral", **busy.payload}

    async def on_mention(self, event: dict[str, Any], context: dict[str, Any]) -> None:
        # bolt acknowledges events itself
        channel, user = _where_and_who(event)
        tell = partial(self._tell_busy, user, partial(self._busy_ephemeral, channel, user))
        if not self.spawn(context, partial(self._answer_mention, event), tell):
            tell()

    async def on_button(
        self,
        ack: Callable[..., Awaitable[Any]],
        body: dict[str, Any],
        action: dict[str, Any],
        respond: Respond,
        context: dict[str, Any],
    ) -> None:
        await ack()
        _, user = _where_and_who(body)
        tell = partial(self._tell_busy, user, partial(self._busy_respond, respond))
        if not self.spawn(context, partial(self._answer_button, body, action, respond), tell):
            tell()

    def spawn(
        self, context: dict[str, Any], answer: Answering, bumped: Callable[[], None] = _nothing
    ) -> bool:
        """Queue `answer` (see `_once`); False, and nothing runs, when the work queue did not
        take it: the caller tells the user the bot is busy. `bumped` tells them when it is
        taken and then pushed out of the queue."""
        once = partial(self._once, list(context.get(ONCE_KEYS, ())), answer)
        user = str(context.get("user_id") or "")
        job = partial(_logged, once, self.gate)
        return self.work.submit(user, job, bumped=bumped) is Admission.TAKEN

    def _tell_busy(self, user: str, notice: Callable[[], Work]) -> None:
        """Tell `user` the bot is busy with a message of its own (once a minute at most)."""
        self.work.tell_busy(user, notice())

    async def _busy_ephemeral(self, channel: str, user: str) -> None:
        busy = render_notice(self.renderer, BUSY, Format.SLACK, self.default_locale)
        await post_ephemeral(self.users.client, channel, user, busy)

    async def _busy_respond(self, respond: Respond) -> None:
        busy = render_notice(self.renderer, BUSY, Format.SLACK, self.default_locale)
        await respond_all(respond, [busy], public=False, where="busy")

    async def _once(self, keys: list[str], answer: Answering) -> None:
        """Answer a request once: its signature (a replay repeats it) and event id (a retry
        repeats it) are recorded first, in the store every replica shares. This runs after the
        ack, so a slow or locked store never holds up Slack's 3 s; while it cannot be reached,
        the answer says the bot is temporarily unavailable."""
        for key in keys:
            first = await self.service.first_time(key)
            if first is None:
                await answer(True)
                return
            if not first:
                log(logger, "slack.seen_before", logging.WARNING, key=key[:40])
                return
        await answer(False)

    # -- answers ---------------------------------------------------------------------------

    async def _answer_command(
        self, command: dict[str, Any], respond: Respond, store_down: bool
    ) -> None:
        text = clean_text(str(command.get("text", "")))
        if opens_picker(partial(parse_pr_text, text)):
            await self.picker.open_from_command(command, respond, store_down)
            return
        user_name = str(command.get("user_name", ""))
        answer, chat = await self.answer(
            command, user_name, partial(parse_pr_text, text), store_down
        )
        messages = await answer_messages(self.renderer, answer.reply, Format.SLACK, chat.locale)
        await respond_all(respond, messages, answer.public, where=SLASH_COMMAND)
        await self.announce(answer, chat)

    async def _answer_mention(self, event: dict[str, Any], store_down: bool) -> None:
        found = parse_mention(clean_text(str(event.get("text", ""))))
        answer, chat = await self.answer(
            event, "", partial(_known, found), store_down, ready=self._bot_is_back
        )
        thread = str(event.get("thread_ts") or event.get("ts") or "") or None
        messages = await answer_messages(self.renderer, answer.reply, Format.SLACK, chat.locale)
        await post_all(self.users.client, chat.chat_id, messages, thread)
        await self.announce(answer, chat)

    async def _bot_is_back(self, chat: Chat) -> None:
        """Slack delivers `app_mention` only from channels the bot is a member of."""
        await self.service.bot_back(Platform.SLACK, chat.chat_id)

    async def _answer_button(
        self, body: dict[str, Any], action: dict[str, Any], respond: Respond, store_down: bool
    ) -> None:
        section = BUTTON_SECTIONS[str(action.get("action_id"))]
        value = str(action.get("value", ""))
        parse = partial(button_request, value, section)
        answer, chat = await self.answer(body, "", parse, store_down)
        messages = await answer_messages(self.renderer, answer.reply, Format.SLACK, chat.locale)
        await respond_all(respond, messages, public=False, where="button")

    # -- shared steps ----------------------------------------------------------------------

    async def chat(self, payload: dict[str, Any], user_name: str) -> Chat:
        channel_id, user_id = _where_and_who(payload)
        is_admin = partial(self.users.is_admin, user_id)
        return await self.service.chat_at(
            Platform.SLACK,
            channel_id,
            user_id,
            private=is_private(Platform.SLACK, channel_id, user_id),
            is_admin=is_admin,
            user_name=user_name,
        )

    async def answer(
        self,
        payload: dict[str, Any],
        user_name: str,
        parse: Callable[[], Request],
        store_down: bool,
        ready: ChatReady | None = None,
    ) -> tuple[Answer, Chat]:
        """The answer and who asked where. The user always hears back: "temporarily
        unavailable" while the store cannot be reached, else the "error" notice for a bug
        (the log has why)."""
        channel_id, user_id = _where_and_who(payload)
        asked = Chat(
            Platform.SLACK, channel_id, user_id, nobody_is_admin, self.default_locale, user_name
        )
        if store_down:
            return Answer(UNAVAILABLE), asked
        try:
            chat = await self.chat(payload, user_name)
            if ready is not None:
                await ready(chat)
            return await self.service.answer_text(parse, chat), chat
        except Exception as exc:  # the one edge handler: a bug must not leave the user unanswered
            unavailable = self.service.is_outage(exc)
            _log_failure("slack.answer_failed", exc, chat=channel_id, unavailable=str(unavailable))
            return Answer(UNAVAILABLE if unavailable else Notice("error")), asked

    async def announce(self, answer: Answer, chat: Chat) -> None:
        """Tell the whole channel that its subscription changed, and who changed it."""
        if answer.announce is None:
            return
        notice = answer.announce
        if notice.params.get("user") == chat.user_id:  # no name in the request: ask Slack
            name = await self.users.display_name(chat.user_id)
            notice = Notice(notice.key, {**notice.params, "user": name or chat.user_id})
        message = render_notice(self.renderer, notice, Format.SLACK, chat.locale)
        await post_all(self.users.client, chat.chat_id, [message])


def _log_failure(event: str, exc: BaseException, **fields: str) -> None:
    fields["reason"] = repr(exc)
    logger.error(event, exc_info=exc, extra={"event": event, "fields": fields})


async def _logged(work: Callable[[], Awaitable[None]], gate: AckGate) -> None:
    """Run an answer when its turn comes (acks first, see `ack_gate.py`); a failure is
    logged (with its traceback), never lost in the loop."""
    try:
        async with gate.turn():
            await work()
    except Exception as exc:  # the worker's edge: nothing above it would see the error
        _log_failure("slack.reply_failed", exc)


def _known(found: Request | None) -> Request:
    """A mention the parser could not read gets the help text."""
    return found if found is not None else Ask(Verb.HELP)


def _where_and_who(payload: dict[str, Any]) -> tuple[str, str]:
    """(channel id, user id) from a slash command, an event or an interactivity payload."""
    channel = payload.get("channel_id") or payload.get("channel") or ""
    if isinstance(channel, dict):
        channel = channel.get("id", "")
    user = payload.get("user_id") or payload.get("user") or ""
    if isinstance(user, dict):
        user = user.get("id", "")
    return str(channel), str(user)
