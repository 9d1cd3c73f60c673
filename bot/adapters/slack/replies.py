"""Sending answers back to Slack: through `response_url` (slash commands, buttons),
`chat.postMessage` (a mention's thread, a subscription announcement) or `chat.postEphemeral`
(the "busy" notice for a mention, which has no response_url), and `chat.update` (a digest
whose PRs were read, a Read's line in its thread).

Payloads come from the renderer (`text` + `blocks`); nothing here adds markup but a read
entry's "✅ alice, bob" (the names escaped), so the house rules (escaped report text,
`verbatim`, no `link_names`) hold for every reply.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack import errors
from bot.chat.read_marks import ReadShape, read_elements
from bot.core.render.actions import ENTRY_ACTION_PREFIX, EntryAction
from bot.core.render.limits.slack import (
    SLACK_MAX_MESSAGE_CHARS,
    SLACK_PER_CHANNEL_INTERVAL,
    SLACK_RESPONSE_URL_USES,
    SLACK_SECTION_TEXT_MAX,
)
from bot.core.render.renderer import RenderedMessage
from bot.core.render.slack import blocks_chars, escape_mrkdwn
from bot.core.render.split import utf16_len
from bot.logs import log

logger = logging.getLogger("prdigest.slack")

RESPOND_KEYS = ("text", "blocks", "unfurl_links", "unfurl_media")
_SMART_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'"})

Respond = Callable[..., Awaitable[Any]]
Blocks = list[dict[str, Any]]

READ_BUTTON: Final = ENTRY_ACTION_PREFIX + EntryAction.READ.value
READ_PREFIX: Final = EntryAction.READ.value + ":"
# A Read's line in a digest's thread carries this metadata (and the PRs it tells of), so a
# later reader's press finds the line to add their name to.
READ_LINE_EVENT: Final = "prdigest_read"
THREAD_PAGE: Final = 200  # replies read when looking for a Read's line


def clean_text(text: str) -> str:
    """What the user typed. Slack escapes `&`, `<`, `>` in command and message text (its own
    `<@U…>` and `<url>` tags stay, the parsers read them), and Slack clients turn typed
    quotes into curly ones (`/pr schedule “0 9 * * mon-fri”`)."""
    unescaped = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return unescaped.translate(_SMART_QUOTES).strip()


def _respond_args(payload: dict[str, Any]) -> dict[str, Any]:
    return {key: payload[key] for key in RESPOND_KEYS if key in payload}


async def respond_all(
    respond: Respond, messages: Sequence[RenderedMessage], public: bool, where: str
) -> None:
    """Answer through response_url: ephemeral unless `public`; never replaces the original
    message (a digest whose button was pressed stays as it was)."""
    response_type = "in_channel" if public else "ephemeral"
    # Answers arrive already cut to `answering.MAX_ANSWER_MESSAGES` (with a pointer to the
    # rest); this cut is the platform's limit, never the answer's cap.
    for message in messages[:SLACK_RESPONSE_URL_USES]:
        try:
            result = await respond(
                response_type=response_type,
                replace_original=False,
                **_respond_args(message.payload),
            )
        except (aiohttp.ClientError, TimeoutError) as exc:
            log(logger, "slack.respond_failed", logging.WARNING, where=where, reason=repr(exc))
            return
        status = getattr(result, "status_code", 200)
        if status != 200:
            body = str(getattr(result, "body", ""))[:200]
            fields = {"where": where, "status": status, "body": body}
            log(logger, "slack.respond_failed", logging.WARNING, **fields)
            return


async def post_all(
    client: AsyncWebClient,
    channel: str,
    messages: Sequence[RenderedMessage],
    thread_ts: str | None = None,
) -> bool:
    """Post messages to a channel (or a thread), one per second like the outbox; False when
    Slack refused one (the rest are not sent: they would fail the same way)."""
    for index, message in enumerate(messages):
        if index:
            await asyncio.sleep(SLACK_PER_CHANNEL_INTERVAL)
        extra: dict[str, Any] = {"thread_ts": thread_ts} if thread_ts else {}
        posting = client.chat_postMessage(channel=channel, **extra, **message.payload)
        if not await _called(posting, "slack.post_failed", channel):
            return False
    return True


async def _called(call: Awaitable[Any], event: str, channel: str) -> bool:
    """Await a Web API call; False, logged as `event`, when Slack refused it or could not be
    reached."""
    try:
        await call
    except SlackApiError as exc:
        status, reason = errors.status_of(exc), errors.reason(exc)
        log(logger, event, logging.WARNING, channel=channel, status=status, reason=reason)
        return False
    except (aiohttp.ClientError, TimeoutError) as exc:
        log(logger, event, logging.WARNING, channel=channel, reason=repr(exc))
        return False
    return True


async def post_ephemeral(
    client: AsyncWebClient, channel: str, user: str, message: RenderedMessage
) -> bool:
    """Post `message` to `user` alone in `channel`; False (logged) when it could not be."""
    args = {key: message.payload[key] for key in ("text", "blocks") if key in message.payload}
    posting = client.chat_postEphemeral(channel=channel, user=user, **args)
    return await _called(posting, "slack.post_failed", channel)


async def respond_replacing(respond: Respond, message: RenderedMessage, where: str) -> None:
    """Replace the (ephemeral) message whose button was pressed with `message`."""
    try:
        await respond(replace_original=True, **_respond_args(message.payload))
    except (aiohttp.ClientError, TimeoutError) as exc:
        log(logger, "slack.respond_failed", logging.WARNING, where=where, reason=repr(exc))


def _read_ref(element: object) -> str | None:
    """The REF a digest's ✅ Read button carries; None for any other element."""
    if not isinstance(element, dict) or element.get("action_id") != READ_BUTTON:
        return None
    value = str(element.get("value", ""))
    return value.removeprefix(READ_PREFIX) if value.startswith(READ_PREFIX) else None


def _with_mark(block: dict[str, Any], mark: str, separator: str) -> dict[str, Any]:
    """A section block with `mark` after its text, when the section still holds it."""
    text = block.get("text")
    if block.get("type") != "section" or not isinstance(text, dict):
        return block
    shown = f"{text.get('text', '')}{separator}{mark}"
    if utf16_len(shown) > SLACK_SECTION_TEXT_MAX:
        return block
    return {**block, "text": {**text, "text": shown}}


SLACK_READ = ReadShape("accessory", "type", "actions", "elements", _read_ref, _with_mark)


def read_blocks(
    blocks: Sequence[dict[str, Any]], keys: Sequence[str], marks: Mapping[str, str]
) -> Blocks:
    """A digest's blocks as posted, with each read entry's ✅ Read button gone and its text
    ending in its mark (`marks`: PR key → "✅ alice, bob", escaped). An entry is a section and
    the actions block after it (Read among its buttons), or, one line each, a section whose
    accessory is Read. Where the marks would not fit the message, only the buttons go."""
    marked, plain = read_elements(blocks, keys, marks, SLACK_READ)
    return marked if blocks_chars(marked) <= SLACK_MAX_MESSAGE_CHARS else plain


def read_marks(readers: Mapping[str, Sequence[str]], mark: str) -> dict[str, str]:
    """Each read PR's mark: `mark` (the label, "✅ {names}") with its readers, escaped."""
    return {
        key: mark.format(names=escape_mrkdwn(", ".join(names)))
        for key, names in readers.items()
        if names
    }


async def update_message(
    client: AsyncWebClient, channel: str, ts: str, payload: Mapping[str, Any]
) -> bool:
    """chat.update the bot's message `ts` to `payload`'s text and blocks; False (logged) when
    Slack refused or could not be reached."""
    args = {key: payload[key] for key in ("text", "blocks") if key in payload}
    updating = client.chat_update(channel=channel, ts=ts, **args)
    return await _called(updating, "slack.update_failed", channel)


async def post_read_line(
    client: AsyncWebClient, channel: str, thread_ts: str, message: RenderedMessage, prs: list[str]
) -> None:
    """A Read's line in the digest's thread, tagged with the PRs it tells of."""
    metadata = {"event_type": READ_LINE_EVENT, "event_payload": {"prs": prs}}
    tagged = RenderedMessage({**message.payload, "metadata": metadata}, message.text)
    await post_all(client, channel, [tagged], thread_ts or None)


async def update_read_line(
    client: AsyncWebClient, channel: str, thread_ts: str, pr: str, message: RenderedMessage
) -> None:
    """Rewrite the line a PR's first Read posted in the thread of `thread_ts` (found by its
    metadata) to `message`; nothing when the line is not found (another thread, a line of
    several PRs, or no history scope)."""
    args = {"channel": channel, "ts": thread_ts, "include_all_metadata": "true"}
    try:
        found = await client.api_call(
            "conversations.replies", http_verb="GET", params={**args, "limit": THREAD_PAGE}
        )
    except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
        log(logger, "slack.thread_unreadable", logging.WARNING, channel=channel,
            reason=type(exc).__name__)  # fmt: skip
        return
    for reply in found.get("messages") or []:
        metadata = reply.get("metadata") or {}
        told = (metadata.get("event_payload") or {}).get("prs")
        if metadata.get("event_type") == READ_LINE_EVENT and told == [pr]:
            await update_message(client, channel, str(reply.get("ts")), message.payload)
            return
