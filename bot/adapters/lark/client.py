"""The Feishu/Lark Open API over one pooled httpx client, with lark-oapi's typed models.

The SDK's own calls do not fit our loop (docs/architecture.md, "Feishu/Lark"): its `acreate`
fetches the tenant token with a blocking `requests` call inside the event loop and opens a new
`httpx.AsyncClient` (a new TLS handshake) for every request, without a timeout. So requests are
built with the SDK's request models (`CreateMessageRequest`, `ReplyMessageRequest`, the token
request: their URI, path, query and body) and sent here; answers are parsed with its response
models. The tenant token is fetched here too, kept until ten minutes before it expires (as the
SDK does), and fetched again at once when the API says it is no longer valid.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from lark_oapi.core.json import JSON
from lark_oapi.core.model import BaseRequest
from lark_oapi.core.token.access_token_response import AccessTokenResponse
from lark_oapi.core.token.create_self_tenant_token_request import CreateSelfTenantTokenRequest
from lark_oapi.core.token.create_token_request_body import CreateTokenRequestBody

from bot.logs import log

logger = logging.getLogger("prdigest.lark")

TIMEOUT = httpx.Timeout(15.0, connect=5.0)
TOKEN_MARGIN_SECONDS = 600.0  # a token is renewed this long before Feishu says it expires
# The token is missing, expired or invalid: fetch another and ask again once.
TOKEN_INVALID_CODES = frozenset({99991661, 99991663, 99991668})


class TokenUnavailable(Exception):
    """Feishu would not give a tenant token (a wrong app id or secret, an outage)."""

    def __init__(self, reason: str, status: int = 0) -> None:
        super().__init__(reason)
        self.reason, self.status = reason, status


@dataclass(frozen=True, slots=True)
class Answer:
    """An API answer: the HTTP status, the headers, and the JSON body (empty when none)."""

    status: int
    headers: httpx.Headers
    body: dict[str, Any] = field(default_factory=dict)

    @property
    def code(self) -> int | None:
        code = self.body.get("code")
        return code if isinstance(code, int) and not isinstance(code, bool) else None


def request_url(request: BaseRequest) -> str:
    """The request's path with its path parameters filled in, each URL-encoded whole."""
    uri = str(request.uri)
    for name, value in (request.paths or {}).items():
        uri = uri.replace(":" + name, urllib.parse.quote(str(value), safe=""))
    return uri


def request_body(request: BaseRequest) -> Any:
    """The request model's body as the SDK writes it (unset fields left out)."""
    return None if request.body is None else json.loads(JSON.marshal(request.body))


class LarkClient:
    """One app's connection: the tenant token and the pooled HTTP client."""

    def __init__(
        self,
        app_id: str,
        app_secret: str,
        api_url: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app_id, self._secret = app_id, app_secret
        self.http = httpx.AsyncClient(base_url=api_url.rstrip("/"), timeout=TIMEOUT)
        self.clock = clock
        self._token: str | None = None
        self._token_until = 0.0
        self._lock = asyncio.Lock()

    async def token(self, *, fresh: bool = False) -> str:
        """The tenant access token; `fresh`: fetched again even if the kept one seems valid."""
        async with self._lock:
            if not fresh and self._token is not None and self.clock() < self._token_until:
                return self._token
            body = CreateTokenRequestBody.builder().app_id(self.app_id)
            request = CreateSelfTenantTokenRequest.builder().request_body(
                body.app_secret(self._secret).build()
            )
            answer = await self._send(request.build(), None)
            parsed = AccessTokenResponse(answer.body)
            if not parsed.success() or not parsed.tenant_access_token:
                reason = f"tenant token refused: {parsed.code} {parsed.msg}"
                raise TokenUnavailable(reason, answer.status)
            self._token = str(parsed.tenant_access_token)
            lifetime = float(parsed.expire or 0)
            self._token_until = self.clock() + max(lifetime - TOKEN_MARGIN_SECONDS, 0.0)
            return self._token

    async def call(self, request: BaseRequest) -> Answer:
        """The request with the tenant token; asked again once with a new token when Feishu
        says the token is no longer valid. Raises httpx.HTTPError or TokenUnavailable."""
        answer = await self._send(request, await self.token())
        if answer.code in TOKEN_INVALID_CODES:
            answer = await self._send(request, await self.token(fresh=True))
        return answer

    async def ask(self, request: BaseRequest, event: str) -> Answer | None:
        """`call` for an answer the bot can do without: None, logged as `event` with the
        error's type, when Feishu is unreachable or gives no token."""
        try:
            return await self.call(request)
        except (httpx.HTTPError, TokenUnavailable) as exc:
            log(logger, event, logging.WARNING, error=type(exc).__name__)
            return None

    async def _send(self, request: BaseRequest, token: str | None) -> Answer:
        headers = {"Content-Type": "application/json; charset=utf-8"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        response = await self.http.request(
            str(request.http_method.name),
            request_url(request),
            params=list(request.queries or []),
            json=request_body(request),
            headers=headers,
        )
        try:
            body = response.json()
        except ValueError:
            body = None
        found = body if isinstance(body, dict) else {}
        return Answer(response.status_code, response.headers, found)

    async def close(self) -> None:
        await self.http.aclose()
