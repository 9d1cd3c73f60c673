"""Telegram threads and forum topics: a reply chain (`reply_parameters`) and forum topics
(`createForumTopic`, then `message_thread_id`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.core.delivery.port import (
    NotForum,
    Opened,
    Outcome,
    Placement,
    Refused,
    Rejected,
    TopicAnswer,
)

# What the Bot API answers createForumTopic in a chat without topics: a supergroup whose
# topics are off, or a private chat or basic group (topics exist in supergroups only).
NOT_FORUM_ERRORS = ("not a forum", "chat_not_forum", "supergroup", "topics are disabled")

# A send into a forum topic that was deleted in the chat.
TOPIC_GONE_ERRORS = ("message thread not found", "topic_deleted", "topic not found")


def is_topic_gone(reason: str) -> bool:
    lowered = reason.lower()
    return any(marker in lowered for marker in TOPIC_GONE_ERRORS)


def place_message(payload: Mapping[str, object], placement: Placement) -> dict[str, object]:
    placed = dict(payload)
    if placement.reply_to is not None and placement.reply_to.isdigit():
        placed["reply_parameters"] = {
            "message_id": int(placement.reply_to),
            "allow_sending_without_reply": True,
        }
    if placement.thread is not None and placement.thread.isdigit():
        placed["message_thread_id"] = int(placement.thread)
    return placed


def topic_answer(answer: dict[str, Any] | Outcome) -> TopicAnswer:
    """createForumTopic's answer as `Opened`, `NotForum`, `Refused`, or the outcome to retry."""
    if isinstance(answer, dict):
        thread = answer.get("message_thread_id")
        if isinstance(thread, int) and not isinstance(thread, bool):
            return Opened(str(thread))
        return Refused("createForumTopic answered without a message_thread_id")
    if isinstance(answer, Rejected):
        reason = answer.reason.lower()
        if any(marker in reason for marker in NOT_FORUM_ERRORS):
            return NotForum(answer.reason)
        return Refused(answer.reason)
    return answer
