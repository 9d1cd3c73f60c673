"""What a Feishu message says to the bot, as the words the other platforms' parser reads.

A text message's content is `{"text": "@_user_1 7422 风险"}`: each @mention is a key
(`@_user_1`) whose person `message.mentions` names. The bot's own key is dropped (the message
is addressed to it); another person's becomes `@name`, so "subscribe by @alice" reads as typed.
A rich-text (`post`) message gives its text runs, one line per paragraph.

Words then become a request as everywhere else (`bot/chat/commands.py`): a command word first
("subscribe rollout -ci at 09:00", "/find 权重", "unsubscribe 2"), otherwise a question about
a PR ("7422 风险", "#7422 的风险", "show risks for #7422").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.chat.commands import (
    SECTION_SHORTCUTS,
    VERB_ALIASES,
    UsageError,
    parse,
    parse_mention,
)
from bot.chat.requests import Request, Verb

MAX_WORDS_CHARS = 2000  # more is not a command; the parser never sees it
COMMAND_WORDS = frozenset({verb.value for verb in Verb} | set(VERB_ALIASES))


@dataclass(frozen=True, slots=True)
class Said:
    words: str  # the text, the bot's mention removed, others' as @name
    addressed: bool  # the bot was @mentioned


def _mention_names(
    mentions: Sequence[Mapping[str, Any]], bot_open_id: str | None
) -> tuple[dict[str, str], bool]:
    """Each mention key's replacement, and whether one of them is the bot."""
    names: dict[str, str] = {}
    addressed = False
    for mention in mentions:
        key = str(mention.get("key") or "")
        ids = mention.get("id")
        open_id = ids.get("open_id") if isinstance(ids, Mapping) else None
        # Without the bot's open_id (Feishu could not be asked), a group message reaches us
        # only when it @mentions the bot (im:message.group_at_msg): a mention is ours.
        ours = open_id == bot_open_id if bot_open_id else True
        addressed = addressed or ours
        if key:
            names[key] = "" if ours else "@" + str(mention.get("name") or "")
    return names, addressed


def _post_text(content: Mapping[str, Any]) -> str:
    """A rich-text message's text: its title and its paragraphs' text and @ runs."""
    body = content.get("content")
    if not isinstance(body, list):  # `{"zh_cn": {...}}` in some clients' posts
        inner = next((v for v in content.values() if isinstance(v, Mapping)), {})
        return _post_text(inner) if inner else ""
    lines = [str(content.get("title") or "")]
    for paragraph in body:
        runs = paragraph if isinstance(paragraph, list) else []
        lines.append("".join(_run_text(run) for run in runs if isinstance(run, Mapping)))
    return "\n".join(line for line in lines if line)


def _run_text(run: Mapping[str, Any]) -> str:
    if run.get("tag") == "at":
        return str(run.get("user_id") or "")  # the mention's key, replaced like text's
    return str(run.get("text") or "")


def message_words(
    message_type: str,
    content: str,
    mentions: Sequence[Mapping[str, Any]],
    bot_open_id: str | None,
) -> Said | None:
    """The words of a text or rich-text message; None for any other kind (an image, a file)."""
    try:
        parsed = json.loads(content)
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    if message_type == "text":
        text = str(parsed.get("text") or "")
    elif message_type == "post":
        text = _post_text(parsed)
    else:
        return None
    names, addressed = _mention_names(mentions, bot_open_id)
    for key in sorted(names, key=len, reverse=True):  # @_user_10 before @_user_1
        text = text.replace(key, names[key])
    return Said(" ".join(text.split())[:MAX_WORDS_CHARS], addressed)


def request_of(words: str) -> Callable[[], Request] | None:
    """How to read `words`: a command (`subscribe …`, `/pr 7422`, `risks 7422`), else a
    question about a PR; None when it is neither (the chat gets a hint how to ask).

    A section word first may still be a sentence ("risks of #7422"): when it does not parse
    as the command, the sentence is read. Any other command keeps its usage error."""
    head, _, rest = words.partition(" ")
    name = head.lower().removeprefix("/")
    if name in COMMAND_WORDS or name in SECTION_SHORTCUTS:
        try:
            found = parse(name, rest)
        except UsageError:
            if name in COMMAND_WORDS and name != Verb.PR.value:
                return lambda: parse(name, rest)  # answered with the command's usage
        else:
            return lambda: found
    question = parse_mention(words)
    return None if question is None else lambda: question
