"""Slack delivery: one `chat.postMessage` per outbox row, errors mapped to outcomes.

No retry handlers on the client: the outbox reschedules (Retry-After, backoff), so a send that
Slack accepted but whose answer was lost is never silently repeated by the SDK as well.

Exactly once: every message carries its outbox row's key in Slack message metadata
(`event_type` prdigest_outbox). A row whose earlier attempt may have reached Slack (a kill or a
dropped connection mid-send) is looked for first, in the channel's history (the thread's
replies for a threaded part) since that attempt began; found, it is recorded as sent, not
posted again. Reading history needs the `channels:history` / `groups:history` / `im:history`
scopes; without them the row is posted again (at least once) and the log says why.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack import errors
from bot.core.clock import Clock, utc_clock
from bot.core.delivery.port import (
    Gone,
    Outcome,
    Placement,
    Refused,
    Rejected,
    RetryAfter,
    Sent,
    TopicAnswer,
    Transient,
    Turn,
    Withheld,
)
from bot.core.models import Platform
from bot.core.render.limits.slack import (
    SLACK_FALLBACK_MAX,
    SLACK_MAX_PER_SECOND,
    SLACK_PER_CHANNEL_INTERVAL,
)
from bot.logs import log

logger = logging.getLogger("prdigest.slack")

DEFAULT_RETRY_AFTER = 30.0
SEND_TIMEOUT_SECONDS = 15

GONE_ERRORS = frozenset(
    {
        "channel_not_found",
        "not_in_channel",
        "is_archived",
        "token_revoked",
        "account_inactive",
        "invalid_auth",
        "not_authed",
        "team_access_not_granted",
    }
)
TRANSIENT_ERRORS = frozenset(
    {"internal_error", "fatal_error", "service_unavailable", "request_timeout", "ratelimited"}
)
THREAD_KEYS = ("thread_ts", "reply_broadcast")  # kept by the plain-text fallback
TOO_BIG_ERRORS = frozenset({"invalid_blocks", "msg_blocks_too_long", "msg_too_long"})
METADATA_EVENT = "prdigest_outbox"  # the metadata event_type of every digest message
CLOCK_SKEW_SECONDS = 60.0  # history is read from this long before the attempt began
HISTORY_PAGE = 200
HISTORY_PAGES = 5  # a busy channel: at most 1,000 messages are read back


def parse_retry_after(value: str | None, now: datetime) -> float:
    """Seconds to wait from a Retry-After header: seconds, a decimal, or an HTTP date.
    Missing or garbage → a safe default, never an exception (slack_sdk's int() would raise)."""
    if not value:
        return DEFAULT_RETRY_AFTER
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return DEFAULT_RETRY_AFTER
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - now).total_seconds()
    if seconds != seconds or seconds < 0:  # NaN or in the past
        return 1.0
    return seconds


class SlackSender:
    platform = Platform.SLACK
    max_per_second = SLACK_MAX_PER_SECOND

    def __init__(self, token: str, api_url: str, clock: Clock = utc_clock) -> None:
        self.client = AsyncWebClient(
            token=token, base_url=api_url, retry_handlers=[], timeout=SEND_TIMEOUT_SECONDS
        )
        self.clock = clock  # a Retry-After may be an HTTP date

    def interval_for(self, target: str) -> float:
        return SLACK_PER_CHANNEL_INTERVAL

    def tagged(self, payload: Mapping[str, object], key: str) -> dict[str, object]:
        metadata = {"event_type": METADATA_EVENT, "event_payload": {"key": key}}
        return {**payload, "metadata": metadata}

    async def find_sent(
        self, target: str, payload: Mapping[str, object], key: str, since: datetime
    ) -> Sent | None:
        args: dict[str, Any] = {
            "channel": target,
            "oldest": f"{since.timestamp() - CLOCK_SKEW_SECONDS:.6f}",
            "include_all_metadata": "true",
            "limit": HISTORY_PAGE,
        }
        method = "conversations.history"
        if thread := payload.get("thread_ts"):  # a reply shows in its thread, not the history
            method, args["ts"] = "conversations.replies", str(thread)
        try:
            for _ in range(HISTORY_PAGES):
                response = await self.client.api_call(method, http_verb="GET", params=args)
                for message in response.get("messages") or []:
                    if _carries(message, key):
                        return Sent(str(message.get("ts") or "") or None)
                cursor = (response.get("response_metadata") or {}).get("next_cursor")
                if not cursor:
                    return None
                args["cursor"] = cursor
        except SlackApiError as exc:
            error = errors.error_code(exc) or f"HTTP {errors.status_of(exc)}"
            log(logger, "slack.history_unreadable", logging.WARNING, channel=target, error=error)
        except (aiohttp.ClientError, TimeoutError) as exc:
            log(logger, "slack.history_unreadable", logging.WARNING, channel=target,
                error=type(exc).__name__)  # fmt: skip
        return None

    async def send(self, target: str, payload: Mapping[str, object], turn: Turn) -> Outcome:
        if not await turn():
            return Withheld()
        outcome = await self._post(target, dict(payload))
        if isinstance(outcome, Rejected) and outcome.reason in TOO_BIG_ERRORS:
            # One plain-text fallback, so the digest still arrives; never a retry loop.
            # The renderer keeps `text` within the cap already; the cut guards other payloads.
            text = str(payload.get("text", ""))[:SLACK_FALLBACK_MAX] or "(empty)"
            plain = {"text": text, "unfurl_links": False}
            plain |= {key: payload[key] for key in THREAD_KEYS if key in payload}
            fallback = await self._post(target, plain)
            if isinstance(fallback, Sent):
                return fallback
        return outcome

    def placed(self, payload: Mapping[str, object], placement: Placement) -> dict[str, object]:
        """A reply in the parent's thread, not broadcast to the channel. Slack has no forum
        topics (the config refuses `layout: topics` here)."""
        placed = dict(payload)
        if placement.reply_to is not None:
            placed.update(thread_ts=placement.reply_to, reply_broadcast=False)
        return placed

    async def open_topic(self, target: str, name: str) -> TopicAnswer:
        return Refused("Slack has no forum topics")

    def topic_gone(self, reason: str) -> bool:
        return False

    async def _post(self, target: str, args: dict[str, Any]) -> Outcome:
        try:
            response = await self.client.chat_postMessage(channel=target, **args)
        except SlackApiError as exc:
            return _api_error(exc, self.clock())
        except (aiohttp.ClientError, TimeoutError) as exc:
            return Transient(f"{type(exc).__name__}: {exc}")
        ts = response.get("ts")
        return Sent(str(ts) if ts else None)


def _carries(message: Mapping[str, Any], key: str) -> bool:
    metadata = message.get("metadata") or {}
    if not isinstance(metadata, Mapping) or metadata.get("event_type") != METADATA_EVENT:
        return False
    found = metadata.get("event_payload") or {}
    return isinstance(found, Mapping) and found.get("key") == key


def _api_error(exc: SlackApiError, now: datetime) -> Outcome:
    status = errors.status_of(exc)
    if status == 429:
        return RetryAfter(parse_retry_after(errors.headers_of(exc).get("retry-after"), now))
    if errors.is_down(exc):  # a 5xx, or an error page that is not Slack's JSON
        return Transient(f"HTTP {status}")
    error = errors.error_code(exc)
    if error in GONE_ERRORS:
        return Gone(error)
    if error in TRANSIENT_ERRORS or not error:
        return Transient(error or f"HTTP {status}")
    return Rejected(error)
