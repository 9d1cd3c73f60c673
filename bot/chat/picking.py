"""What Slack's modal and Telegram's keyboard share: may this person pick here, what there
is to pick, and the one way a pick ends, as the typed `subscribe QUERY at CADENCE`.

The Answerer decides who may subscribe where (admins in channels and groups, the person in
a DM or a private chat): `subscribe` alone is put to it first, and the picker opens only when
the answer is the one it gives to anyone allowed (`PICKER_ALLOWED`); any other answer
("Only admins…") is the user's answer instead of a picker. The pick itself is typed text
through the same parser and Answerer, so the admin rule, the announcement and the audit apply
once more, to whoever submits it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from bot.chat.answers import Answer, Answerer, Chat, Notice
from bot.chat.commands import parse
from bot.chat.picker import Choices, Pick, known_choices
from bot.chat.requests import OpenPicker, Request
from bot.chat.subscriptions import PICKER

# What the Answerer answers `subscribe` alone with, once the admin and locked rules let it through.
PICKER_ALLOWED = PICKER


async def picker_refusal(answerer: Answerer, chat: Chat) -> Answer | None:
    """None when the picker may open for `chat`'s user; else the answer they get instead."""
    answer = await answerer.answer(OpenPicker(), chat)
    reply = answer.reply
    if isinstance(reply, Notice) and reply.key == PICKER_ALLOWED:
        return None
    return answer


async def choices(answerer: Answerer) -> Choices:
    return await known_choices(answerer.reports, answerer.clock())


def picked_parse(pick: Pick) -> Callable[[], Request]:
    """The pick as the typed command's parse: `subscribe QUERY at CADENCE`."""
    return partial(parse, "subscribe", pick.command_text())
