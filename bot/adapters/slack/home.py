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
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError

from bot.adapters.answering import answer_messages
from bot.adapters.slack import errors
from bot.adapters.slack.host import Ack, ListenerHost
from bot.adapters.slack.modal import SlackPicker, tell
from bot.chat.commands import parse
from bot.chat.search import search
from bot.chat.subscriptions import next_text
from bot.core.models import Format, Locale, Platform
from bot.core.query import And, Field, Or, Query, QueryError
from bot.core.render.picker_labels import picker_label
from bot.core.render.slack import escape_mrkdwn
from bot.core.render.views import link_url
from bot.core.store.search.budget import QueryTooComplex, QueryTooSlow
from bot.core.store.subscriptions import Subscription
from bot.logs import log

logger = logging.getLogger("prdigest.slack")

ADD, REMOVE = "home_add", "home_remove"
MUST_READ_SHOWN: Final = 5
MUST_READ_CANDIDATES: Final = 50  # best matches read, then the newest five of them shown
MAX_SHOWN_SUBSCRIPTIONS: Final = 60  # a Home tab holds 100 blocks; the rest is headroom
MAX_CHANNELS_ASKED: Final = 50  # conversations.members calls per publish (Tier 4)
MEMBERS_PAGE: Final = 200
MAX_SECTION_TEXT: Final = 3000


@dataclass(frozen=True, slots=True)
class HomeData:
    mine: list[Subscription]
    channels: list[str]
    must_read: list[tuple[str, str, str | None]]  # (ref, title, url)
    next_posts: dict[int, str] = field(default_factory=dict)  # by subscription id, calendar's


def _plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text[:MAX_SECTION_TEXT]}


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text[:MAX_SECTION_TEXT], "verbatim": True}


def _header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": _plain(text[:150])}


def _button(label: str, action_id: str, value: str) -> dict[str, Any]:
    return {"type": "button", "text": _plain(label[:75]), "action_id": action_id, "value": value}


def _sub_block(sub: Subscription, locale: Locale, now: Any, upcoming: str | None) -> dict[str, Any]:
    line = picker_label(
        "home_line",
        locale,
        Platform.SLACK,
        number=str(sub.number),
        query=sub.filter.listed_query(),
        cadence=sub.cadence,
        next=upcoming or next_text(sub.schedule, sub.timezone, now),
    )
    remove = _button(picker_label("home_remove", locale), REMOVE, f"{sub.target}:{sub.number}")
    return {"type": "section", "text": _plain(line), "accessory": remove}


def _pr_line(ref: str, title: str, url: str | None) -> str:
    safe = link_url(url)
    label = escape_mrkdwn(f"{ref} {title}")
    return f"• <{safe.replace('&', '&amp;')}|{label}>" if safe else f"• {label}"


def home_view(data: HomeData, locale: Locale, dm: str, now: Any) -> dict[str, Any]:
    def word(key: str) -> str:
        return picker_label(key, locale, Platform.SLACK)

    blocks: list[dict[str, Any]] = [_header(word("home_title")), _header(word("home_mine"))]
    if not data.mine:
        blocks.append({"type": "section", "text": _plain(word("home_mine_empty"))})
    shown = data.mine[:MAX_SHOWN_SUBSCRIPTIONS]
    blocks += [_sub_block(s, locale, now, data.next_posts.get(s.id)) for s in shown]
    blocks.append({"type": "actions", "elements": [_button(word("home_add"), ADD, dm)]})
    blocks.append(_header(word("home_channels")))
    channels = "\n".join(f"• <#{c}>" for c in data.channels) or word("home_channels_empty")
    blocks.append({"type": "section", "text": _mrkdwn(channels)})
    blocks.append(_header(word("home_must_read")))
    lines = "\n".join(_pr_line(*item) for item in data.must_read)
    text = _mrkdwn(lines) if lines else _plain(word("home_must_read_empty"))
    blocks.append({"type": "section", "text": text})
    return {"type": "home", "blocks": blocks, "private_metadata": json.dumps({"dm": dm})}


def _matching(subs: list[Subscription]) -> Query | None:
    """Must-read PRs that match any of `subs` (each one's whole filter, as its digest reads it)."""
    queries: list[Query] = []
    for sub in subs:
        try:
            query = sub.filter.query_ast
        except QueryError:
            continue
        if query is None:  # a filter that keeps every report: any must-read PR
            return Field("rec", ":", "must_read")
        queries.append(query)
    if not queries:
        return None
    anyone = queries[0] if len(queries) == 1 else Or(tuple(queries))
    return And((Field("rec", ":", "must_read"), anyone))


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
        mine = {(s.target, str(s.number)) for s in await self._mine(payload["user_id"])}
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

    async def _mine(self, user: str) -> list[Subscription]:
        everything = await self.host.answerer.verbs.store.all()
        return [s for s in everything if s.platform is Platform.SLACK and s.owner == user]

    async def publish(self, user: str, dm: str) -> None:
        """Show `user` their Home tab as it is now."""
        chat = await self.host.chat({"channel_id": dm, "user_id": user}, "")
        answerer = self.host.answerer
        now = answerer.clock()
        mine = await self._mine(user)
        upcoming = {sub.id: answerer.verbs.next_post(sub, now) for sub in mine}
        data = HomeData(mine, await self._channels(user), [], upcoming)
        query = _matching(data.mine)
        if query is not None:
            try:
                found = await search(answerer.reports, query, limit=MUST_READ_CANDIDATES, now=now)
            except (QueryTooSlow, QueryTooComplex) as exc:  # the tab shows the rest without them
                log(logger, "slack.home_must_reads_skipped", logging.WARNING, reason=str(exc))
            else:
                newest = sorted(found.hits, key=lambda h: (h.report.merged_at or now, h.seq))
                shown = newest[::-1][:MUST_READ_SHOWN]
                data.must_read.extend((h.report.ref, h.report.title, h.report.url) for h in shown)
        view = home_view(data, chat.locale, dm, now)
        try:
            await self.host.users.client.views_publish(user_id=user, view=view)
        except SlackApiError as exc:
            log(logger, "slack.home_failed", logging.WARNING, reason=errors.reason(exc))

    async def _channels(self, user: str) -> list[str]:
        """Slack channels with digests (not DMs) that `user` is a member of."""
        everything = await self.host.answerer.verbs.store.all(active_only=True)
        targets = dict.fromkeys(
            s.target for s in everything if s.platform is Platform.SLACK and not s.owner
        )
        channels = [t for t in targets if not t.startswith("D")][:MAX_CHANNELS_ASKED]
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
