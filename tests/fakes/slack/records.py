"""What the fake Slack remembers: every call, every accepted message, workspace state."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RecordedCall:
    """One request as the fake received it, and what it answered."""

    method: str  # "chat.postMessage", or "response_url" for response_url posts
    params: dict[str, Any]  # query + form/JSON merged; JSON-string params (blocks...) decoded
    headers: Mapping[str, str]  # case-insensitive
    time: float  # the fake's clock (time.monotonic unless injected)
    http_method: str = "POST"
    path: str = ""
    status: int | None = None  # None: the fake dropped the connection without answering
    response: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return bool(self.response and self.response.get("ok"))


@dataclass
class PostedMessage:
    """A message the fake accepted: chat.postMessage, chat.postEphemeral or a response_url post."""

    method: str
    channel: str
    ts: str
    text: str | None
    blocks: list[Any] | None = None
    attachments: list[Any] | None = None
    thread_ts: str | None = None
    user: str | None = None  # the one viewer of an ephemeral message
    metadata: dict[str, Any] | None = None
    response_type: str | None = None  # response_url posts: "ephemeral" or "in_channel"
    replace_original: bool = False
    delete_original: bool = False
    time: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class FakeChannel:
    id: str
    name: str
    archived: bool = False
    bot_member: bool = True
    is_private: bool = False
    members: set[str] = field(default_factory=set)  # user ids (conversations.members)


@dataclass(frozen=True)
class Violation:
    """Live markup the bot tried to send: refused, and kept for the test to report."""

    method: str
    error: str
    token: str
    pointer: str
    reason: str
    time: float


@dataclass
class ResponseUrl:
    """A slash command's response_url: 5 uses within 30 minutes, like real Slack's."""

    key: str
    channel: str
    user: str
    created: float
    uses: int = 0
