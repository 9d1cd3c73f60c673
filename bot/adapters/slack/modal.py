"""`/pr subscribe` with no arguments: a modal (views.open) of the known tags with their
counts, repos, a minimum impact and a cadence. Submitting it runs the typed command
`subscribe QUERY at CADENCE` (bot/chat/picking.py) for the channel it was opened in.

The channel travels in the view's `private_metadata`, which Slack sends back inside the
signed submission. A submission with nothing picked is answered in the modal itself
(`response_action: errors`); anything else closes it, and the answer is the typed command's:
"Added subscription 1…" to the user, the announcement to the channel.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, Final

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError

from bot.adapters.answering import UNAVAILABLE, answer_messages
from bot.adapters.slack import errors
from bot.adapters.slack.host import Ack, ListenerHost
from bot.adapters.slack.replies import Respond, post_all, respond_all
from bot.chat.answers import Answer, Chat, Notice
from bot.chat.picker import CADENCES, IMPACTS, Choices, EmptyPickError, Pick
from bot.chat.picking import picked_parse
from bot.chat.subscriptions import PICKER
from bot.core.models import Format, Locale, Platform
from bot.core.render.limits.slack import (
    SLACK_OPTION_TEXT_MAX,
    SLACK_OPTION_VALUE_MAX,
    SLACK_SECTION_TEXT_MAX,
    SLACK_SELECT_OPTIONS_MAX,
    SLACK_VIEW_TITLE_MAX,
)
from bot.core.render.picker_labels import picker_label
from bot.logs import log

logger = logging.getLogger("prdigest.slack")

CALLBACK_ID: Final = "prdigest_subscribe"
TAGS, REPOS, IMPACT, CADENCE = "tags", "repos", "impact", "cadence"  # block ids = action ids
EPHEMERAL_KEYS: Final = frozenset({"text", "blocks"})  # of a rendered message (no unfurl_*)

Changed = Callable[[str, str], Awaitable[None]]  # (user, DM channel): a person's own changed


def _plain(text: str, limit: int = SLACK_SECTION_TEXT_MAX) -> dict[str, Any]:
    cut = text if len(text) <= limit else text[: limit - 1] + "…"
    return {"type": "plain_text", "text": cut}


def _option(value: str, text: str) -> dict[str, Any]:
    return {"text": _plain(text, SLACK_OPTION_TEXT_MAX), "value": value}


def _counted(pairs: Sequence[tuple[str, int]]) -> list[dict[str, Any]]:
    """Options `value (n)`, most reports first, within Slack's option limits."""
    fitting = [(v, n) for v, n in pairs if len(v) <= SLACK_OPTION_VALUE_MAX]
    return [_option(v, f"{v} ({n})") for v, n in fitting[:SLACK_SELECT_OPTIONS_MAX]]


def _select(
    block_id: str, label: str, options: list[dict[str, Any]], *, many: bool, required: bool
) -> dict[str, Any]:
    element: dict[str, Any] = {
        "type": "multi_static_select" if many else "static_select",
        "action_id": block_id,
        "options": options,
    }
    if required:
        element["initial_option"] = options[0]
    return {
        "type": "input",
        "block_id": block_id,
        "label": _plain(label, 2000),
        "element": element,
        "optional": not required,
    }


def modal_view(found: Choices, locale: Locale, channel: str, private: bool) -> dict[str, Any]:
    """The subscribe modal for `channel`, in `locale`."""

    def word(key: str) -> str:
        return picker_label(key, locale, Platform.SLACK)

    intro = word("intro_private" if private else "intro")
    blocks: list[dict[str, Any]] = [{"type": "section", "text": _plain(intro)}]
    if found.tags:
        blocks.append(_select(TAGS, word("tags"), _counted(found.tags), many=True, required=False))
    if found.repos:
        repos = _counted(found.repos)
        blocks.append(_select(REPOS, word("repos"), repos, many=True, required=False))
    impacts = [_option(level, word(f"impact_{level}")) for level in IMPACTS]
    blocks.append(_select(IMPACT, word("impact"), impacts, many=False, required=False))
    cadences = [_option(c, word(f"cadence_{c}")) for c in CADENCES]
    blocks.append(_select(CADENCE, word("cadence"), cadences, many=False, required=True))
    return {
        "type": "modal",
        "callback_id": CALLBACK_ID,
        "title": _plain(word("modal_title"), SLACK_VIEW_TITLE_MAX),
        "submit": _plain(word("submit"), SLACK_VIEW_TITLE_MAX),
        "close": _plain(word("close"), SLACK_VIEW_TITLE_MAX),
        "private_metadata": json.dumps({"channel": channel, "locale": locale.value}),
        "blocks": blocks,
    }


def _state(view: dict[str, Any], block_id: str) -> dict[str, Any]:
    values = view.get("state", {}).get("values", {})
    found = values.get(block_id, {}).get(block_id)
    return found if isinstance(found, dict) else {}


def _many(view: dict[str, Any], block_id: str) -> tuple[str, ...]:
    options = _state(view, block_id).get("selected_options") or []
    return tuple(str(option["value"]) for option in options)


def _one(view: dict[str, Any], block_id: str) -> str | None:
    option = _state(view, block_id).get("selected_option")
    return str(option["value"]) if isinstance(option, dict) else None


def read_pick(view: dict[str, Any]) -> Pick:
    """What a submitted modal picked; EmptyPickError when it picked nothing to read."""
    cadence = _one(view, CADENCE)
    impact = _one(view, IMPACT)
    pick = Pick(
        tags=_many(view, TAGS),
        repos=_many(view, REPOS),
        min_impact=impact if impact in IMPACTS else None,
        cadence=cadence if cadence in CADENCES else CADENCES[0],
    )
    pick.command_text()  # raises EmptyPickError
    return pick


def _metadata(view: dict[str, Any]) -> tuple[str, Locale]:
    try:
        data = json.loads(str(view.get("private_metadata") or "{}"))
    except ValueError:
        data = {}
    locale = data.get("locale")
    return str(data.get("channel", "")), Locale(locale) if locale in set(Locale) else Locale.EN


class SlackPicker:
    def __init__(self, host: ListenerHost) -> None:
        self.host = host
        self.changed: Changed | None = None  # set by the Home tab: republish it

    def register(self, app: AsyncApp) -> None:
        app.view(CALLBACK_ID)(self.on_submit)

    async def open(self, trigger_id: str, chat: Chat) -> Answer | None:
        """Open the modal for `chat`; the answer to give instead when it may not open."""
        refusal = await self.host.service.picker_refusal(chat)
        if refusal is not None:
            return refusal
        found = await self.host.service.picker_choices()
        view = modal_view(found, chat.locale, chat.chat_id, chat.private)
        try:
            await self.host.users.client.views_open(trigger_id=trigger_id, view=view)
        except SlackApiError as exc:  # e.g. expired_trigger_id: Slack was slow to reach us
            log(logger, "slack.modal_failed", logging.WARNING, reason=errors.reason(exc))
            return Answer(Notice(PICKER))  # typing is still the fast path: say how
        return None

    async def open_from_command(
        self, command: dict[str, Any], respond: Respond, store_down: bool
    ) -> None:
        """`/pr subscribe` alone: the modal, or the answer why not."""
        answer: Answer | None = Answer(UNAVAILABLE)
        locale = Locale.EN
        if not store_down:
            chat = await self.host.chat(command, str(command.get("user_name", "")))
            locale = chat.locale
            answer = await self.open(str(command.get("trigger_id", "")), chat)
        if answer is not None:
            messages = await answer_messages(self.host.renderer, answer.reply, Format.SLACK, locale)
            await respond_all(respond, messages, public=False, where="subscribe picker")

    async def on_submit(
        self, ack: Ack, body: dict[str, Any], view: dict[str, Any], context: dict[str, Any]
    ) -> None:
        channel, locale = _metadata(view)
        try:
            pick = read_pick(view)
        except EmptyPickError:
            first = TAGS if _has_block(view, TAGS) else IMPACT
            message = picker_label("empty_pick", locale, Platform.SLACK)
            await ack(response_action="errors", errors={first: message})
            return
        await ack()
        user = body.get("user") or {}
        payload = {"channel_id": channel, "user_id": str(user.get("id", ""))}
        name = str(user.get("username") or user.get("name") or "")
        self.host.spawn(context, partial(self._subscribe, payload, name, pick))

    async def _subscribe(
        self, payload: dict[str, Any], name: str, pick: Pick, store_down: bool
    ) -> None:
        host = self.host
        answer, chat = await host.answer(payload, name, picked_parse(pick), store_down)
        messages = await answer_messages(host.renderer, answer.reply, Format.SLACK, chat.locale)
        await tell(host, chat, messages)
        await host.announce(answer, chat)
        if chat.private and self.changed is not None:
            await self.changed(chat.user_id, chat.chat_id)


def _has_block(view: dict[str, Any], block_id: str) -> bool:
    return any(block.get("block_id") == block_id for block in view.get("blocks", []))


async def tell(host: ListenerHost, chat: Chat, messages: Sequence[Any]) -> None:
    """An answer with no response_url (a modal's, a Home tab button's): posted in a DM, only
    shown to the user (ephemeral) in a channel."""
    client = host.users.client
    if chat.private:
        await post_all(client, chat.chat_id, messages)
        return
    for message in messages:
        try:
            content = {k: v for k, v in message.payload.items() if k in EPHEMERAL_KEYS}
            await client.chat_postEphemeral(channel=chat.chat_id, user=chat.user_id, **content)
        except SlackApiError as exc:
            log(logger, "slack.ephemeral_failed", logging.WARNING, reason=errors.reason(exc))
            return
