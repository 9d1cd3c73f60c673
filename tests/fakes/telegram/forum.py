"""Forum topics and replies, as the Bot API documents them: `createForumTopic` works in forum
supergroups only (the bot an administrator), a message goes to a topic by `message_thread_id`
(the topic must exist) and replies by `reply_parameters` (the message must exist in the chat
unless `allow_sending_without_reply`)."""

from __future__ import annotations

from tests.fakes.telegram.spec import as_int, bad_request, complete
from tests.fakes.telegram.state import ADMIN_STATUSES, BotState, FakeChat

TOPIC_NAME_MAX = 128
ICON_COLOR = 7322096  # the first of the colors createForumTopic allows (0x6FB9F0)
NOT_A_FORUM = "the chat is not a forum"


async def create_forum_topic(state: BotState, params: dict[str, object]) -> object:
    chat = state.chat(params["chat_id"])
    if not chat.is_forum:
        raise bad_request(NOT_A_FORUM)
    if state.member_status(chat, state.bot_id) not in ADMIN_STATUSES:
        raise bad_request("not enough rights to create a topic")
    name = str(params["name"])
    if not 1 <= len(name) <= TOPIC_NAME_MAX:
        raise bad_request("TOPIC_TITLE_EMPTY" if not name else "TOPIC_TITLE_TOO_LONG")
    thread = chat.next_message_id()  # a topic's id is that of the message that opened it
    chat.topics[thread] = name
    return complete(
        state.spec,
        "ForumTopic",
        {"message_thread_id": thread, "name": name, "icon_color": ICON_COLOR},
    )


def placement(chat: FakeChat, params: dict[str, object]) -> tuple[int | None, int | None]:
    """(the topic, the message replied to) of a message being sent, checked."""
    thread = params.get("message_thread_id")
    topic = None if thread is None else as_int(thread)
    if topic is not None and (not chat.is_forum or topic not in chat.topics):
        raise bad_request("message thread not found")
    reply = params.get("reply_parameters")
    if not isinstance(reply, dict):
        return topic, None
    replied = as_int(reply["message_id"])
    if replied in chat.messages:
        return topic, replied
    if reply.get("allow_sending_without_reply") and topic is None:
        return topic, None
    raise bad_request("message to be replied not found")
