"""Sending answers back to Slack: through `response_url` (slash commands, buttons),
`chat.postMessage` (a mention's thread, a subscription announcement) or `chat.postEphemeral`
(the "busy" notice for a mention, which has no response_url).

Payloads come from the renderer (`text` + `blocks`); nothing here adds markup, so the house
rules (escaped report text, `verbatim`, no `link_names`) hold for every reply.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack import errors
from bot.core.render.limits.slack import SLACK_PER_CHANNEL_INTERVAL, SLACK_RESPONSE_URL_USES
from bot.core.render.renderer import RenderedMessage
from bot.logs import log

logger = logging.getLogger("prdigest.slack")

RESPOND_KEYS = ("text", "blocks", "unfurl_links", "unfurl_media")
_SMART_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'"})

Respond = Callable[..., Awaitable[Any]]


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
        try:
            await client.chat_postMessage(channel=channel, **extra, **message.payload)
        except SlackApiError as exc:
            log(
                logger,
                "slack.post_failed",
                logging.WARNING,
                channel=channel,
                status=errors.status_of(exc),
                reason=errors.reason(exc),
            )
            return False
        except (aiohttp.ClientError, TimeoutError) as exc:
            log(logger, "slack.post_failed", logging.WARNING, channel=channel, reason=repr(exc))
            return False
    return True


async def post_ephemeral(
    client: AsyncWebClient, channel: str, user: str, message: RenderedMessage
) -> bool:
    """Post `message` to `user` alone in `channel`; False (logged) when it could not be."""
    args = {key: message.payload[key] for key in ("text", "blocks") if key in message.payload}
    try:
        await client.chat_postEphemeral(channel=channel, user=user, **args)
    except SlackApiError as exc:
        reason = errors.reason(exc)
        log(logger, "slack.post_failed", logging.WARNING, channel=channel, reason=reason)
        return False
    except (aiohttp.ClientError, TimeoutError) as exc:
        log(logger, "slack.post_failed", logging.WARNING, channel=channel, reason=repr(exc))
        return False
    return True
