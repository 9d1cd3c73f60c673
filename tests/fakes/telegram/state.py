"""What the fake Telegram knows: chats and members, the messages the bot sent, the update queue.

Tests read it through `FakeTelegram` (`fake.sent`, `fake.chats`, ...); the method handlers in
`telegram_methods` change it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Literal

from tests.fakes.telegram.faults import FloodGate
from tests.fakes.telegram.html import Entity
from tests.fakes.telegram.spec import BotApiSpec, as_int, bad_request, complete

ChatType = Literal["private", "group", "supergroup", "channel"]
MemberStatus = Literal["creator", "administrator", "member", "restricted", "left", "kicked"]
MEMBER_STATUSES = ("creator", "administrator", "member", "restricted", "left", "kicked")
ADMIN_STATUSES = ("creator", "administrator")


@dataclass(frozen=True)
class RecordedCall:
    """One request as the fake understood it; `params` decoded (JSON-string fields parsed)."""

    method: str
    params: dict[str, object]
    time: float
    status: int = 200
    response: dict[str, object] = field(default_factory=dict)

    @property
    def description(self) -> str:
        return str(self.response.get("description", ""))


@dataclass(frozen=True)
class SentMessage:
    """An accepted sendMessage or editMessageText, as the chat shows it."""

    method: str
    chat_id: int
    message_id: int
    text: str  # as sent, markup included
    plain_text: str  # after entity parsing: what the reader sees
    parse_mode: str | None
    entities: tuple[Entity, ...]
    reply_markup: dict[str, object] | None
    time: float
    message_thread_id: int | None = None  # the forum topic it went to (None: General / chat)
    reply_to: int | None = None  # the message it replies to (reply_parameters.message_id)


@dataclass
class PollTicket:
    """The getUpdates call in flight; another call (or setWebhook) ends it with a reason."""

    ended: asyncio.Event = field(default_factory=asyncio.Event)
    reason: str = ""

    def end(self, reason: str) -> None:
        if not self.ended.is_set():
            self.reason = reason
            self.ended.set()


@dataclass
class FakeChat:
    id: int
    type: ChatType
    title: str | None = None
    username: str | None = None
    members: dict[int, MemberStatus] = field(default_factory=dict)
    messages: dict[int, SentMessage] = field(default_factory=dict)
    last_message_id: int = 0
    is_forum: bool = False  # a forum supergroup: topics on
    topics: dict[int, str] = field(default_factory=dict)  # message_thread_id -> topic name

    def to_api(self) -> dict[str, object]:
        """The Chat object of this chat."""
        data: dict[str, object] = {"id": self.id, "type": self.type}
        if self.type == "private":
            data["first_name"] = self.title or f"User {self.id}"
        else:
            data["title"] = self.title or f"Test {self.type} {self.id}"
        if self.username:
            data["username"] = self.username
        if self.is_forum:
            data["is_forum"] = True
        return data

    def next_message_id(self) -> int:
        self.last_message_id += 1
        return self.last_message_id


def user_object(user_id: int) -> dict[str, object]:
    """A User object for a (human) test user."""
    return {"id": user_id, "is_bot": False, "first_name": f"User {user_id}", "language_code": "en"}


class BotState:
    """The fake's world. Chats must be added (or appear in a pushed update) to exist."""

    def __init__(self, spec: BotApiSpec, token: str, bot_username: str, flood: FloodGate) -> None:
        self.spec = spec
        self.flood = flood
        self.bot_user: dict[str, object] = {
            "id": int(token.split(":", 1)[0]) if token.split(":", 1)[0].isdigit() else 1,
            "is_bot": True,
            "first_name": "prdigest test bot",
            "username": bot_username,
        }
        self.chats: dict[int, FakeChat] = {}
        self.sent: list[SentMessage] = []
        self.commands: dict[str, list[dict[str, object]]] = {}
        self.webhook: dict[str, object] = {"url": ""}
        self.updates: list[dict[str, object]] = []
        self.last_update_id = 0
        self.allowed_updates: set[str] = set()  # empty: the default types
        self.callback_query_ids: set[str] = set()
        self.answered_callbacks: list[dict[str, object]] = []
        self.update_pushed = asyncio.Event()
        self.active_poll: PollTicket | None = None
        self.max_poll_seconds = 1.0

    @property
    def bot_id(self) -> int:
        return as_int(self.bot_user["id"])

    def add_chat(
        self,
        chat_id: int,
        type: ChatType = "private",
        title: str | None = None,
        username: str | None = None,
        is_forum: bool = False,
    ) -> FakeChat:
        if (type == "private") != (chat_id > 0):
            raise ValueError(f"private chats have positive ids, others negative: {chat_id}")
        if is_forum and type != "supergroup":
            raise ValueError("only supergroups are forums")
        chat = self.chats.get(chat_id)
        if chat is None:
            chat = self.chats[chat_id] = FakeChat(chat_id, type, title, username)
        chat.is_forum = chat.is_forum or is_forum
        return chat

    def set_member(self, chat_id: int, user_id: int, status: MemberStatus = "member") -> None:
        if status not in MEMBER_STATUSES:
            raise ValueError(f"unknown member status {status!r}")
        self.chat(chat_id).members[user_id] = status

    def chat(self, chat_ref: object) -> FakeChat:
        """The chat named by a chat_id parameter (an id or "@username"), else "chat not found"."""
        if isinstance(chat_ref, str):
            if chat_ref.lstrip("-").isdigit():
                chat_ref = int(chat_ref)
            else:
                for chat in self.chats.values():
                    if chat.username and f"@{chat.username}" == chat_ref:
                        return chat
                raise bad_request("chat not found")
        found = self.chats.get(chat_ref) if isinstance(chat_ref, int) else None
        if found is None:
            raise bad_request("chat not found")
        return found

    def member_status(self, chat: FakeChat, user_id: int) -> MemberStatus:
        default: MemberStatus = (
            "creator" if chat.type == "private" and user_id == chat.id else "member"
        )
        return chat.members.get(user_id, default)

    def chat_member(self, chat: FakeChat, user_id: int) -> dict[str, object]:
        """A ChatMember object with every field the spec requires for its status."""
        status = self.member_status(chat, user_id)
        is_bot = user_id == self.bot_id
        user = self.bot_user if is_bot else user_object(user_id)
        type_name = {
            "creator": "ChatMemberOwner",
            "administrator": "ChatMemberAdministrator",
            "member": "ChatMemberMember",
            "restricted": "ChatMemberRestricted",
            "left": "ChatMemberLeft",
            "kicked": "ChatMemberBanned",
        }[status]
        member: dict[str, object] = {"status": status, "user": user}
        if status == "administrator":
            member.update(can_manage_chat=True, can_delete_messages=True, can_invite_users=True)
        return complete(self.spec, type_name, member)

    def message_object(self, chat: FakeChat, sent: SentMessage, edited: bool) -> dict[str, object]:
        """The Message object the API returns for a message the bot sent or edited."""
        message: dict[str, object] = {
            "message_id": sent.message_id,
            "from": self.bot_user,
            "date": int(time.time()),
            "chat": chat.to_api(),
            "text": sent.plain_text,
        }
        if sent.entities:
            message["entities"] = [entity.to_api() for entity in sent.entities]
        if sent.message_thread_id is not None:
            message.update(message_thread_id=sent.message_thread_id, is_topic_message=True)
        if sent.reply_markup and "inline_keyboard" in sent.reply_markup:
            message["reply_markup"] = sent.reply_markup
        if edited:
            message["edit_date"] = int(time.time())
        return message

    def push_update(self, update: dict[str, object]) -> int:
        """Queue an update for getUpdates; learn the chats and callback queries it names."""
        update = dict(update)
        if "update_id" not in update:
            update["update_id"] = self.last_update_id + 1
        update_id = as_int(update["update_id"])
        self.last_update_id = max(self.last_update_id, update_id)
        self._learn_from(update)
        self.updates.append(update)
        self.update_pushed.set()
        return update_id

    def _learn_from(self, update: dict[str, object]) -> None:
        for value in update.values():
            if not isinstance(value, dict):
                continue
            if "data" in value and "id" in value:  # a callback query the bot may answer
                self.callback_query_ids.add(str(value["id"]))
            message = value.get("message") if isinstance(value.get("message"), dict) else value
            chat = message.get("chat") if isinstance(message, dict) else None
            if isinstance(chat, dict) and isinstance(chat.get("id"), int):
                known = self.chats.get(chat["id"])
                if known is None:
                    self.add_chat(chat["id"], chat.get("type", "private"), chat.get("title"))
