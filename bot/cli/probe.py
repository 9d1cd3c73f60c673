"""Can this host reach Slack and Telegram now? `prdigest status` asks each platform with a
token once (Slack `auth.test`, Telegram `getMe`) and says so in one line, in the words the log
uses ("cannot reach slack.com").

A refused token and an unreachable API are different problems with different fixes, so they
read differently: Slack answered and refused the token; or the host could not be reached
(DNS, connection, timeout, an error page instead of the API's JSON).
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from bot.adapters.reach import api_host, one_line
from bot.settings import Env

PROBE_TIMEOUT = httpx.Timeout(5.0)  # per platform; the probes run at once


async def platform_lines(env: Env) -> list[str]:
    """One line per platform: `slack: reachable (slack.com, auth.test ok as @prdigest)`,
    `slack: cannot reach slack.com: ConnectError: …`, `telegram: off (TELEGRAM_BOT_TOKEN unset)`."""
    async with httpx.AsyncClient(timeout=PROBE_TIMEOUT) as client:
        return list(await asyncio.gather(_slack(env, client), _telegram(env, client)))


async def _slack(env: Env, client: httpx.AsyncClient) -> str:
    if env.slack_bot_token is None:
        return "slack: off (SLACK_BOT_TOKEN unset)"
    token = env.slack_bot_token.get_secret_value()
    url = f"{env.slack_api_url.rstrip('/')}/auth.test"
    headers = {"Authorization": f"Bearer {token}"}
    answer = await _ask(client, url, headers, token, "slack", env.slack_api_url)
    if isinstance(answer, str):
        return answer
    host = api_host(env.slack_api_url)
    if answer.get("ok") is True:
        return f"slack: reachable ({host}, auth.test ok as @{answer.get('user', '?')})"
    return f"slack: {host} answered but refused the token ({answer.get('error', 'no error given')})"


async def _telegram(env: Env, client: httpx.AsyncClient) -> str:
    if env.telegram_bot_token is None:
        return "telegram: off (TELEGRAM_BOT_TOKEN unset)"
    token = env.telegram_bot_token.get_secret_value()
    url = f"{env.telegram_api_url.rstrip('/')}/bot{token}/getMe"
    answer = await _ask(client, url, {}, token, "telegram", env.telegram_api_url)
    if isinstance(answer, str):
        return answer
    host = api_host(env.telegram_api_url)
    if answer.get("ok") is True:
        user = answer.get("result") or {}
        return f"telegram: reachable ({host}, getMe ok as @{user.get('username', '?')})"
    reason = answer.get("description", "no description given")
    return f"telegram: {host} answered but refused the token ({reason})"


async def _ask(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    token: str,
    platform: str,
    api_url: str,
) -> dict[str, Any] | str:
    """The API's JSON object, or the line saying why the platform could not be reached (the
    token, which Telegram's URL carries, never shown)."""
    unreachable = f"{platform}: cannot reach {api_host(api_url)}"
    try:
        response = await client.post(url, headers=headers)
    except httpx.HTTPError as exc:
        return f"{unreachable}: {one_line(exc).replace(token, '***')}"
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):  # a proxy's error page, not the platform's API
        return f"{unreachable}: HTTP {response.status_code}, not an API answer"
    return body
