"""Who a Slack user is: admin or not (may change a channel's subscription), and a name to show.

Admins are the user ids under `slack.admins` in the config, or workspace admins and owners as
`users.info` reports them. Answers are cached briefly so a burst of commands costs one call;
a failed lookup denies (and is cached for less time, so a Slack hiccup heals quickly).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.reach import one_line
from bot.adapters.slack import errors
from bot.logs import log

logger = logging.getLogger("prdigest.slack")

USER_CACHE_SECONDS = 300.0
FAILED_LOOKUP_CACHE_SECONDS = 15.0


@dataclass(frozen=True, slots=True)
class SlackUser:
    id: str
    name: str
    is_admin: bool


def _name(user: dict[str, Any]) -> str:
    profile = user.get("profile") or {}
    for candidate in (profile.get("display_name"), profile.get("real_name"), user.get("name")):
        if isinstance(candidate, str) and candidate.strip():
            return candidate.strip()
    return ""


def _from_info(user_id: str, user: dict[str, Any]) -> SlackUser:
    is_admin = any(bool(user.get(flag)) for flag in ("is_admin", "is_owner", "is_primary_owner"))
    return SlackUser(user_id, _name(user), is_admin and not user.get("deleted"))


class SlackUsers:
    def __init__(
        self,
        client: AsyncWebClient,
        admins: Iterable[str] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.admins = frozenset(admins)
        self._clock = clock
        self._cache: dict[str, tuple[float, SlackUser]] = {}

    async def is_admin(self, user_id: str) -> bool:
        if user_id in self.admins:
            return True
        return (await self.lookup(user_id)).is_admin

    async def display_name(self, user_id: str) -> str:
        return (await self.lookup(user_id)).name

    async def lookup(self, user_id: str) -> SlackUser:
        cached = self._cache.get(user_id)
        if cached is not None and cached[0] > self._clock():
            return cached[1]
        user, keep_for = await self._fetch(user_id)
        self._cache[user_id] = (self._clock() + keep_for, user)
        return user

    async def _fetch(self, user_id: str) -> tuple[SlackUser, float]:
        try:
            response = await self.client.users_info(user=user_id)
        except SlackApiError as exc:
            log(
                logger,
                "slack.users_info_failed",
                logging.WARNING,
                user=user_id,
                reason=errors.reason(exc),
            )
            return SlackUser(user_id, "", False), FAILED_LOOKUP_CACHE_SECONDS
        except (aiohttp.ClientError, TimeoutError) as exc:
            log(
                logger,
                "slack.users_info_failed",
                logging.WARNING,
                user=user_id,
                reason=one_line(exc),
            )
            return SlackUser(user_id, "", False), FAILED_LOOKUP_CACHE_SECONDS
        user = response.get("user")
        if not isinstance(user, dict):
            return SlackUser(user_id, "", False), FAILED_LOOKUP_CACHE_SECONDS
        return _from_info(user_id, user), USER_CACHE_SECONDS
