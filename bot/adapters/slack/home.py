"""Slack's App Home (`app_home_opened` → `views.publish`): a person's own subscriptions (made
in their DM with the bot) with add and remove buttons, the channels they are in that get
digests, and the five newest must-read PRs that match any of their subscriptions.

Add opens the subscribe modal for their DM; Remove is the typed `unsubscribe N` in that DM.
Both answer in the DM, as a typed command would, and the Home tab is published again.
Which channels a person is in comes from `conversations.members` of each Slack channel that
has digests (scope `channels:read`, `groups:read` for private ones).
"""

from __future__ import annotations

import json
import logging
from functools import partial
from typing import Any, Final

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError

from bot.adapters.answering import answer_messages
from bot.adapters.slack import errors
from bot.adapters.slack.host import Ack, ListenerHost
from bot.adapters.slack.modal import SlackPicker, tell
from bot.chat.commands import parse
from bot.chat.home import HomeData, HomeSubscription, MustRead
from bot.core.models import Format, Locale, Platform
from bot.core.render.limits.slack import SLACK_SECTION_TEXT_MAX
from bot.core.render.picker_labels import picker_label
from bot.core.render.slack import escape_mrkdwn
from bot.core.render.views import link_url
from bot.logs import log

logger = logging.getLogger("prdigest.slack")

ADD, REMOVE = "home_add", "home_remove"
MAX_SHOWN_SUBSCRIPTIONS: Final = (
    60  # SLACK_VIEW_BLOCKS_MAX blocks fit a Home tab; the rest is headroom
)
MAX_CHANNELS_ASKED: Final = 50  # conversations.members calls per publish (Tier 4)
MEMBERS_PAGE: Final = 200


def _plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text[:SLACK_SECTION_TEXT_MAX]}


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text[:SLACK_SECTION_TEXT_MAX], "verbatim": True}


def _header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": _plain(text[:150])}


def _button(label: str, action_id: str, value: str) -> dict[str, Any]:
    return {"type": "button", "text": _plain(label[:75]), "action_id": action_id, "value": value}


def _sub_block(sub: HomeSubscription, locale: Locale) -> dict[str, Any]:
    line = picker_label(
        "home_line",
        locale,
        Platform.SLACK,
        number=str(sub.number),
        query=sub.query,
        cadence=sub.cadence,
        next=sub.next_post,
    )
    remove = _button(picker_label("home_remove", locale), REMOVE, f"{sub.target}:{sub.number}")
    return {"type": "section", "text": _plain(line), "accessory": remove}


def _pr_line(pr: MustRead) -> str:
    safe = link_url(pr.url)
    label = escape_mrkdwn(f"{pr.ref} {pr.title}")
    return f"• <{safe.replace('&', '&amp;')}|{label}>" if safe else f"• {label}"


def home_view(data: HomeData, channels: list[str], locale: Locale, dm: str) -> dict[str, Any]:
    def word(key: str) -> str:
        return picker_label(key, locale, Platform.SLACK)

    blocks: list[dict[str, Any]] = [_header(word("home_title")), _header(word("home_mine"))]
    if not data.mine:
        blocks.append({"type": "section", "text": _plain(word("home_mine_empty"))})
    shown = data.mine[:MAX_SHOWN_SUBSCRIPTIONS]
    blocks += [_sub_block(s, locale) for s in shown]
    blocks.append({"type": "actions", "elements": [_button(word("home_add"), ADD, dm)]})
    blocks.append(_header(word("home_channels")))
    listed = "\n".join(f"• <#{c}>" for c in channels) or word("home_channels_empty")
    blocks.append({"type": "section", "text": _mrkdwn(listed)})
    blocks.append(_header(word("home_must_read")))
    lines = "\n".join(_pr_line(pr) for pr in data.must_read)
    text = _mrkdwn(lines) if lines else _plain(word("home_must_read_empty"))
    blocks.append({"type": "section", "text": text})
    return {"type": "home", "blocks": blocks, "private_metadata": json.dumps({"dm": dm})}


class SlackHome:
    def __init__(self, host: ListenerHost, picker: SlackPicker) -> None:
        self.host = host
        self.picker = picker
        picker.changed = self.publish

    def register(self, app: AsyncApp) -> None:
        app.event("app_home_opened")(self.on_opened)
        app.action(ADD)(self.on_add)
        app.action(REMOVE)(self.on_remove)

    async def on_opened(self, event: dict[str, Any], context: dict[str, Any]) -> None:
        if event.get("tab") != "home":  # the Messages tab is the DM itself
            return
        user, dm = str(event.get("user", "")), str(event.get("channel", ""))
        self.host.spawn(context, partial(self._publish_unless_down, user, dm))

    async def _publish_unless_down(self, user: str, dm: str, store_down: bool) -> None:
        if not store_down:
            await self.publish(user, dm)

    async def on_add(self, ack: Ack, body: dict[str, Any], context: dict[str, Any]) -> None:
        await ack()
        self.host.spawn(context, partial(self._add, body))

    async def on_remove(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], context: dict[str, Any]
    ) -> None:
        await ack()
        self.host.spawn(context, partial(self._remove, body, str(action.get("value", ""))))

    async def _add(self, body: dict[str, Any], store_down: bool) -> None:
        payload, name = _who(body)
        if store_down or not payload["channel_id"]:
            return
        chat = await self.host.chat(payload, name)
        refused = await self.picker.open(str(body.get("trigger_id", "")), chat)
        if refused is not None:
            messages = await answer_messages(
                self.host.renderer, refused.reply, Format.SLACK, chat.locale
            )
            await tell(self.host, chat, messages)

    async def _remove(self, body: dict[str, Any], value: str, store_down: bool) -> None:
        payload, name = _who(body)
        target, _, number = value.rpartition(":")
        owned = await self.host.service.owned(Platform.SLACK, payload["user_id"])
        mine = {(s.target, str(s.number)) for s in owned}
        if (target, number) not in mine:  # gone already (pressed twice), or not theirs
            log(logger, "slack.home_remove_stale", target=target[:20], number=number[:10])
            return
        payload["channel_id"] = target
        unsubscribe = partial(parse, "unsubscribe", number)
        answer, chat = await self.host.answer(payload, name, unsubscribe, store_down)
        rendered = await answer_messages(
            self.host.renderer, answer.reply, Format.SLACK, chat.locale
        )
        await tell(self.host, chat, rendered)
        await self.publish(chat.user_id, target)

    async def publish(self, user: str, dm: str) -> None:
        """Show `user` their Home tab as it is now."""
        chat = await self.host.chat({"channel_id": dm, "user_id": user}, "")
        data = await self.host.service.home(Platform.SLACK, user)
        view = home_view(data, await self._channels(data, user), chat.locale, dm)
        try:
            await self.host.users.client.views_publish(user_id=user, view=view)
        except SlackApiError as exc:
            log(logger, "slack.home_failed", logging.WARNING, reason=errors.reason(exc))

    async def _channels(self, data: HomeData, user: str) -> list[str]:
        """Slack channels with digests (not DMs) that `user` is a member of."""
        channels = [t for t in data.shared_chats if not t.startswith("D")][:MAX_CHANNELS_ASKED]
        return [c for c in channels if await self._is_member(c, user)]

    async def _is_member(self, channel: str, user: str) -> bool:
        client = self.host.users.client
        cursor = ""
        while True:
            try:
                page = await client.conversations_members(
                    channel=channel, limit=MEMBERS_PAGE, cursor=cursor or None
                )
            except SlackApiError as exc:
                log(logger, "slack.members_failed", channel=channel, reason=errors.reason(exc))
                return False
            if user in (page.get("members") or []):
                return True
            cursor = str((page.get("response_metadata") or {}).get("next_cursor") or "")
            if not cursor:
                return False


def _who(body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """({channel_id: the user's DM, user_id}, user name) of a Home tab button press."""
    user = body.get("user") or {}
    view = body.get("view") or {}
    try:
        dm = str(json.loads(str(view.get("private_metadata") or "{}")).get("dm", ""))
    except ValueError:
        dm = ""
    name = str(user.get("username") or user.get("name") or "")
    return {"channel_id": dm, "user_id": str(user.get("id", ""))}, name
