"""The fake workspace behind the Web API: users, channels, messages, and the methods that use them.

Each method takes the call's validated params and returns the JSON answer, or raises
`SlackRefusal` with the error real Slack gives for the same situation.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from tests.fakes.slack.messages import check_message, is_true
from tests.fakes.slack.records import FakeChannel, PostedMessage
from tests.fakes.slack.spec import SlackRefusal

TS_STEP_MICROS = 100  # two messages are at least this far apart
DEFAULT_CHANNELS = ("C0TEST1", "C0TEST2", "C0TEST3")
DEFAULT_USER = "U0TEST1"
MEMBERS_DEFAULT_LIMIT = 100
MEMBERS_MAX_LIMIT = 1000
MethodHandler = Callable[[dict[str, Any]], dict[str, Any]]


class Workspace:
    """One team with a bot user; state is plain containers that tests may read and change."""

    def __init__(self, clock: Callable[[], float], team_id: str, bot_user_id: str, bot_id: str):
        self.clock = clock
        self.team_id, self.bot_user_id, self.bot_id = team_id, bot_user_id, bot_id
        self.users: dict[str, dict[str, Any]] = {}
        self.channels: dict[str, FakeChannel] = {}
        self.posted: list[PostedMessage] = []
        self.updates: list[PostedMessage] = []
        self.messages: dict[tuple[str, str], PostedMessage] = {}  # (channel, ts) → current state
        self.allowed_mentions: set[str] = set()
        self._ts_count = 0
        for channel_id in DEFAULT_CHANNELS:
            self.add_channel(channel_id)
        self.add_user(DEFAULT_USER)

    def add_user(
        self, user_id: str, is_admin: bool = False, is_owner: bool = False, **fields: Any
    ) -> dict[str, Any]:
        name = fields.pop("name", user_id.lower())
        user: dict[str, Any] = {
            "id": user_id,
            "team_id": self.team_id,
            "name": name,
            "real_name": name,
            "deleted": False,
            "is_admin": is_admin,
            "is_owner": is_owner,
            "is_primary_owner": False,
            "is_restricted": False,
            "is_ultra_restricted": False,
            "is_bot": False,
            "is_app_user": False,
            "tz": "Asia/Shanghai",
            "tz_offset": 28800,
            "profile": {"real_name": name, "display_name": name, "team": self.team_id},
            **fields,
        }
        self.users[user_id] = user
        return user

    def add_channel(
        self, channel_id: str, archived: bool = False, bot_member: bool = True, name: str = ""
    ) -> FakeChannel:
        channel = FakeChannel(channel_id, name or channel_id.lower(), archived, bot_member)
        self.channels[channel_id] = channel
        return channel

    def next_ts(self) -> str:
        """Slack's `ts`: the wall-clock time of the post (as history's `oldest`/`latest` read
        it), unique and increasing in the workspace."""
        wall = int(time.time() * 1_000_000)
        self._ts_count = max(wall, self._ts_count + TS_STEP_MICROS)
        return f"{self._ts_count // 1_000_000}.{self._ts_count % 1_000_000:06d}"

    def handlers(self) -> Mapping[str, MethodHandler]:
        return {
            "auth.test": self.auth_test,
            "chat.postMessage": self.post_message,
            "chat.postEphemeral": self.post_ephemeral,
            "chat.update": self.update_message,
            "users.info": self.users_info,
            "conversations.info": self.conversations_info,
            "conversations.join": self.conversations_join,
            "conversations.history": self.conversations_history,
            "conversations.replies": self.conversations_replies,
            "conversations.members": self.conversations_members,
        }

    # -- answers -----------------------------------------------------------------------------

    def channel_json(self, channel: FakeChannel) -> dict[str, Any]:
        return {
            "id": channel.id,
            "name": channel.name,
            "is_channel": not channel.is_private,
            "is_private": channel.is_private,
            "is_archived": channel.archived,
            "is_member": channel.bot_member,
            "context_team_id": self.team_id,
        }

    def message_json(self, message: PostedMessage, with_metadata: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": "message",
            "user": self.bot_user_id,
            "bot_id": self.bot_id,
            "team": self.team_id,
            "ts": message.ts,
            "text": message.text or "",
        }
        optional: dict[str, Any] = {
            "blocks": message.blocks,
            "attachments": message.attachments,
            "thread_ts": message.thread_ts,
            "metadata": message.metadata if with_metadata else None,
        }
        data.update({key: value for key, value in optional.items() if value is not None})
        return data

    # -- methods -----------------------------------------------------------------------------

    def auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://fake-team.slack.com/",
            "team": "Fake Team",
            "user": "prdigest",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def known_channel(self, channel_id: object) -> FakeChannel:
        channel = self.channels.get(str(channel_id))
        if channel is None:
            raise SlackRefusal("channel_not_found")
        return channel

    def postable_channel(self, channel_id: object) -> FakeChannel:
        channel = self.known_channel(channel_id)
        if channel.archived:
            raise SlackRefusal("is_archived")
        if not channel.bot_member:
            raise SlackRefusal("not_in_channel")
        return channel

    def _accept(
        self, method: str, channel: str, params: dict[str, Any], **more: Any
    ) -> PostedMessage:
        content = check_message(params, self.allowed_mentions)
        message = PostedMessage(
            method=method,
            channel=channel,
            ts=self.next_ts(),
            text=content.text if content.text is not None else content.markdown_text,
            blocks=content.blocks,
            attachments=content.attachments,
            thread_ts=params.get("thread_ts"),
            metadata=params.get("metadata"),
            time=self.clock(),
            params=params,
            **more,
        )
        self.posted.append(message)
        return message

    def post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self.postable_channel(params["channel"])
        message = self._accept("chat.postMessage", channel.id, params)
        # A copy: chat.update changes what the channel shows, not the record of what was posted.
        self.messages[(channel.id, message.ts)] = replace(message)
        answer = self.message_json(message)
        return {"ok": True, "channel": channel.id, "ts": message.ts, "message": answer}

    def post_ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self.postable_channel(params["channel"])
        if params["user"] not in self.users:
            raise SlackRefusal("user_not_in_channel")
        message = self._accept("chat.postEphemeral", channel.id, params, user=params["user"])
        return {"ok": True, "message_ts": message.ts}

    def update_message(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self.postable_channel(params["channel"])
        current = self.messages.get((channel.id, str(params["ts"])))
        if current is None:
            raise SlackRefusal("message_not_found")
        content = check_message(params, self.allowed_mentions)
        current.text = content.text if content.text is not None else content.markdown_text
        current.blocks, current.attachments = content.blocks, content.attachments
        if "metadata" in params:
            current.metadata = params["metadata"]
        self.updates.append(replace(current, method="chat.update", time=self.clock()))
        answer = self.message_json(current)
        text = answer["text"]
        return {
            "ok": True,
            "channel": channel.id,
            "ts": current.ts,
            "text": text,
            "message": answer,
        }

    def users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = self.users.get(str(params.get("user", "")))
        if user is None:
            raise SlackRefusal("user_not_found")
        return {"ok": True, "user": user}

    def conversations_info(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self.known_channel(params.get("channel"))
        return {"ok": True, "channel": self.channel_json(channel)}

    def conversations_join(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self.known_channel(params.get("channel"))
        if channel.archived:
            raise SlackRefusal("is_archived")
        channel.bot_member = True
        return {"ok": True, "channel": self.channel_json(channel)}

    def conversations_members(self, params: dict[str, Any]) -> dict[str, Any]:
        """A channel's member ids, a page at a time (`limit`, default 100, and `cursor`); a
        private channel the bot is not in is `channel_not_found`, as in Slack."""
        channel = self.known_channel(params.get("channel"))
        if channel.is_private and not channel.bot_member:
            raise SlackRefusal("channel_not_found")
        limit = int(_number(params, "limit", MEMBERS_DEFAULT_LIMIT, "invalid_limit"))
        if limit < 1 or limit > MEMBERS_MAX_LIMIT:
            raise SlackRefusal("invalid_limit")
        start = _page_start(params.get("cursor"))
        members = sorted(channel.members)
        end = start + limit
        cursor = base64.b64encode(f"member:{end}".encode()).decode() if end < len(members) else ""
        return {
            "ok": True,
            "members": members[start:end],
            "response_metadata": {"next_cursor": cursor},
        }

    def conversations_history(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self.known_channel(params.get("channel"))
        if not channel.bot_member:
            raise SlackRefusal("not_in_channel")
        oldest = _number(params, "oldest", 0.0, "invalid_ts_oldest")
        latest = _number(params, "latest", 0.0, "invalid_ts_latest") or float("inf")
        window = (oldest, latest, is_true(params.get("inclusive")))
        found = [
            message
            for (channel_id, _), message in self.messages.items()
            if channel_id == channel.id and _in_history_window(message, *window)
        ]
        found.sort(key=lambda message: float(message.ts), reverse=True)
        limit = int(_number(params, "limit", 100, "invalid_limit")) or 100
        with_metadata = is_true(params.get("include_all_metadata"))
        return {
            "ok": True,
            "messages": [self.message_json(message, with_metadata) for message in found[:limit]],
            "has_more": len(found) > limit,
            "pin_count": 0,
            "response_metadata": {"next_cursor": ""},
        }

    def conversations_replies(self, params: dict[str, Any]) -> dict[str, Any]:
        """A thread: its parent, then its replies, oldest first (Slack's order)."""
        channel = self.known_channel(params.get("channel"))
        if not channel.bot_member:
            raise SlackRefusal("not_in_channel")
        parent = str(params.get("ts") or "")
        if (channel.id, parent) not in self.messages:
            raise SlackRefusal("thread_not_found")
        oldest = _number(params, "oldest", 0.0, "invalid_ts_oldest")
        latest = _number(params, "latest", 0.0, "invalid_ts_latest") or float("inf")
        inclusive = is_true(params.get("inclusive"))
        found = [
            message
            for (channel_id, ts), message in self.messages.items()
            if channel_id == channel.id
            and (ts == parent or message.thread_ts == parent)
            and (ts == parent or _between(float(ts), oldest, latest, inclusive))
        ]
        found.sort(key=lambda message: float(message.ts))
        limit = int(_number(params, "limit", 100, "invalid_limit")) or 100
        with_metadata = is_true(params.get("include_all_metadata"))
        return {
            "ok": True,
            "messages": [self.message_json(message, with_metadata) for message in found[:limit]],
            "has_more": len(found) > limit,
            "response_metadata": {"next_cursor": ""},
        }


def _between(ts: float, oldest: float, latest: float, inclusive: bool) -> bool:
    return oldest <= ts <= latest if inclusive else oldest < ts < latest


def _page_start(cursor: object) -> int:
    """Where a `next_cursor` this fake gave out starts; Slack's `invalid_cursor` otherwise."""
    if not cursor:
        return 0
    try:
        kind, _, index = base64.b64decode(str(cursor), validate=True).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        raise SlackRefusal("invalid_cursor") from None
    if kind != "member" or not index.isdigit():
        raise SlackRefusal("invalid_cursor")
    return int(index)


def _number(params: Mapping[str, Any], name: str, default: float, error: str) -> float:
    try:
        return float(params.get(name) or default)
    except ValueError:
        raise SlackRefusal(error) from None


def _in_history_window(
    message: PostedMessage, oldest: float, latest: float, inclusive: bool
) -> bool:
    """conversations.history shows thread parents and broadcast replies within oldest..latest."""
    in_thread = message.thread_ts not in (None, message.ts)
    if in_thread and not is_true(message.params.get("reply_broadcast")):
        return False
    return _between(float(message.ts), oldest, latest, inclusive)
