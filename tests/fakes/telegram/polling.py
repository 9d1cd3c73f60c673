"""getUpdates and webhooks of the fake Telegram Bot API.

getUpdates follows the real semantics: an offset confirms (forgets) every update below it, a
negative offset keeps only the last -offset updates, a long poll waits up to `timeout` seconds
(capped by `FakeTelegram(max_poll_seconds=...)`) for a pushed update. One consumer per token: a
new getUpdates ends the one in flight with 409, and getUpdates is refused while a webhook is set.
"""

from __future__ import annotations

import asyncio
import re
import time

from tests.fakes.telegram.spec import BotApiError, as_int, bad_request
from tests.fakes.telegram.state import BotState, PollTicket

WEBHOOK_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")
# "Specify an empty list to receive all update types except chat_member, message_reaction,
# and message_reaction_count (default)." (getUpdates, allowed_updates)
NOT_BY_DEFAULT = {"chat_member", "message_reaction", "message_reaction_count"}
CONFLICT_OTHER_POLL = (
    "Conflict: terminated by other getUpdates request; "
    "make sure that only one bot instance is running"
)
CONFLICT_WEBHOOK = (
    "Conflict: can't use getUpdates method while webhook is active; "
    "use deleteWebhook to delete the webhook first"
)
CONFLICT_SET_WEBHOOK = "Conflict: terminated by setWebhook request"


async def set_webhook(state: BotState, params: dict[str, object]) -> object:
    url = str(params["url"])
    if url and not url.startswith("https://"):
        raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
    secret = params.get("secret_token")
    if secret is not None and not WEBHOOK_SECRET.fullmatch(str(secret)):
        raise bad_request("secret token contains unallowed characters")
    if params.get("drop_pending_updates"):
        state.updates.clear()
    _remember_allowed_updates(state, params)
    state.webhook = {key: value for key, value in params.items() if key != "certificate"}
    if url:
        _end_active_poll(state, CONFLICT_SET_WEBHOOK)
    return True


async def delete_webhook(state: BotState, params: dict[str, object]) -> object:
    if params.get("drop_pending_updates"):
        state.updates.clear()
    _remember_allowed_updates(state, params)
    state.webhook = {"url": ""}
    return True


async def get_webhook_info(state: BotState, params: dict[str, object]) -> object:
    info: dict[str, object] = {
        "url": state.webhook.get("url", ""),
        "has_custom_certificate": False,
        "pending_update_count": len(state.updates),
    }
    for key in ("max_connections", "allowed_updates", "ip_address"):
        if key in state.webhook:
            info[key] = state.webhook[key]
    return info


def _end_active_poll(state: BotState, reason: str) -> None:
    if state.active_poll is not None:
        state.active_poll.end(reason)


async def get_updates(state: BotState, params: dict[str, object]) -> object:
    if state.webhook.get("url"):
        raise BotApiError(409, CONFLICT_WEBHOOK)
    _end_active_poll(state, CONFLICT_OTHER_POLL)  # the newest poll wins, as on the real API
    ticket = state.active_poll = PollTicket()
    _remember_allowed_updates(state, params)
    try:
        _confirm(state, params.get("offset"))
        offset = params.get("offset")
        start = offset if isinstance(offset, int) and offset > 0 else 0
        limit = min(max(as_int(params.get("limit"), 100), 1), 100)
        wait = min(as_int(params.get("timeout")), state.max_poll_seconds)
        await _wait_for_updates(state, start, ticket, wait)
        if ticket.ended.is_set():
            raise BotApiError(409, ticket.reason)
        return _available(state, start)[:limit]
    finally:
        if state.active_poll is ticket:
            state.active_poll = None


def _remember_allowed_updates(state: BotState, params: dict[str, object]) -> None:
    """ "If not specified, the previous setting will be used" (getUpdates, setWebhook)."""
    kinds = params.get("allowed_updates")
    if isinstance(kinds, list):
        state.allowed_updates = {str(kind) for kind in kinds}


def _confirm(state: BotState, offset: object) -> None:
    """An offset confirms every update below it; a negative one keeps only the last -offset."""
    if not isinstance(offset, int) or offset == 0:
        return
    if offset < 0:
        del state.updates[: max(len(state.updates) + offset, 0)]
    else:
        state.updates[:] = _available(state, offset)


async def _wait_for_updates(state: BotState, start: int, ticket: PollTicket, wait: float) -> None:
    """Long poll: wait up to `wait` s for an update ≥ start, unless another call ends this one."""
    deadline = time.monotonic() + wait
    while not _available(state, start) and not ticket.ended.is_set():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        state.update_pushed.clear()
        waiters = {
            asyncio.ensure_future(state.update_pushed.wait()),
            asyncio.ensure_future(ticket.ended.wait()),
        }
        await asyncio.wait(waiters, timeout=remaining, return_when="FIRST_COMPLETED")
        for waiter in waiters:
            waiter.cancel()


def _available(state: BotState, start: int) -> list[dict[str, object]]:
    """Updates from `start` on; updates of types the bot did not ask for are never delivered."""
    allowed = state.allowed_updates or set(state.spec.types["Update"].fields) - NOT_BY_DEFAULT
    state.updates[:] = [u for u in state.updates if _update_type(u) in allowed]
    return [u for u in state.updates if as_int(u["update_id"]) >= start]


def _update_type(update: dict[str, object]) -> str:
    return next((key for key in update if key != "update_id"), "")
