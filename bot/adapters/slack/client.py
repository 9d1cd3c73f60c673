"""The Web API client for interactive answers (mention replies, announcements, users.info).

Digests do not use it: they go through the outbox, whose sender reschedules on Retry-After.
An interactive answer has a person waiting, so a short Retry-After is slept through once or
twice; a long one (or a garbage header, which slack_sdk's own handler would crash on) gives up
at once rather than hold a reply for minutes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import aiohttp
from slack_bolt.authorization import AuthorizeResult
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import AsyncConnectionErrorRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.reach import log_unreachable, one_line
from bot.adapters.slack import errors
from bot.adapters.slack.sender import parse_retry_after
from bot.core.clock import Clock
from bot.logs import log

logger = logging.getLogger("prdigest.slack")

INTERACTIVE_MAX_WAIT_SECONDS = 10.0
INTERACTIVE_RATE_LIMIT_RETRIES = 2
INTERACTIVE_TIMEOUT_SECONDS = 15


def _retry_after(response: HttpResponse, clock: Clock) -> float:
    for name, values in response.headers.items():
        if name.lower() == "retry-after":
            value = values[0] if isinstance(values, list) and values else values
            return parse_retry_after(str(value), clock())
    return parse_retry_after(None, clock())


class ShortRateLimitRetryHandler(AsyncRetryHandler):
    """Retry a 429 after its Retry-After, only when that is at most `max_wait` seconds."""

    def __init__(
        self,
        clock: Clock,
        max_retry_count: int = INTERACTIVE_RATE_LIMIT_RETRIES,
        max_wait: float = INTERACTIVE_MAX_WAIT_SECONDS,
    ) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.clock = clock  # a Retry-After may be an HTTP date
        self.max_wait = max_wait

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None or response.status_code != 429:
            return False
        return _retry_after(response, self.clock) <= self.max_wait

    async def prepare_for_next_attempt_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        assert response is not None  # _can_retry_async answered True only with a response
        state.next_attempt_requested = True
        await asyncio.sleep(_retry_after(response, self.clock))
        state.increment_current_attempt()


def interactive_client(token: str, api_url: str, clock: Clock) -> AsyncWebClient:
    return AsyncWebClient(
        token=token,
        base_url=api_url,
        timeout=INTERACTIVE_TIMEOUT_SECONDS,
        retry_handlers=[AsyncConnectionErrorRetryHandler(), ShortRateLimitRetryHandler(clock)],
    )


class BotIdentity:
    """Who the bot is (team, bot user id), from one `auth.test` with our own client.

    Bolt's built-in single-team authorization calls `auth.test` through its per-request
    client, which adds the request's `team_id` to every call; a strict API (our test fake,
    following Slack's OpenAPI spec) refuses that argument. Authorizing ourselves keeps every
    call the bot makes to arguments the spec allows.
    """

    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client
        self._result: AuthorizeResult | None = None

    async def result(self) -> AuthorizeResult | None:
        """The cached identity; None (and retried next time) while Slack cannot be asked."""
        if self._result is None:
            try:
                response = await self.client.auth_test()
            except SlackApiError as exc:
                if errors.is_down(exc):  # an error page, not Slack's JSON: Slack is down
                    self._unreachable(errors.reason(exc))
                else:
                    log(logger, "slack.auth_failed", logging.ERROR, reason=errors.reason(exc))
                return None
            except (aiohttp.ClientError, TimeoutError) as exc:  # DNS, connect, timeout
                self._unreachable(one_line(exc))
                return None
            self._result = AuthorizeResult.from_auth_test_response(
                auth_test_response=response, bot_token=self.client.token
            )
        return self._result

    def _unreachable(self, reason: str) -> None:
        log_unreachable(logger, "slack", self.client.base_url, reason, logging.ERROR)

    def authorize_function(self) -> Callable[..., Awaitable[AuthorizeResult]]:
        """For `AsyncApp(authorize=...)`; bolt passes the arguments by name."""

        async def authorize(enterprise_id: str | None, team_id: str | None) -> AuthorizeResult:
            known = await self.result()
            if known is not None:
                return known
            # auth.test failed: answer with the token anyway (response_url needs none); only
            # the bot's own events cannot be recognised until auth.test works again.
            return AuthorizeResult(
                enterprise_id=enterprise_id, team_id=team_id, bot_token=self.client.token
            )

        return authorize
