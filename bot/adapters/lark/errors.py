"""What Feishu's error codes mean for an outbox row (docs/lark.md lists them with sources).

Every reason starts with the code, so the log and `prdigest status` name it exactly.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.core.delivery.port import Blocked, Gone, Outcome, Rejected, RetryAfter, Transient

# The gateway's rate limit (HTTP 429, older APIs 400): wait x-ogw-ratelimit-reset seconds.
RATE_LIMITED = 99991400
# Message create: the group's or the user's 5 QPS was passed (shared by the group's bots).
CHAT_RATE_LIMITED = 230020
RESET_HEADER = "x-ogw-ratelimit-reset"
DEFAULT_RETRY_AFTER = 5.0
CHAT_RETRY_AFTER = 1.0
# The bot can no longer reach this destination: it was removed from the group (230002), the
# user is outside the app's availability (230013), or the chat was disbanded (230049).
GONE_CODES = frozenset({230002, 230013, 230049})
# The bot may not post here now: the app lacks a scope (230027, 99991672), its bot ability
# is off (230006), the group allows only admins to speak (230035), the user stopped the bot
# (230053). An admin can undo each: retried with backoff, deactivated after five in a row.
BLOCKED_CODES = frozenset({230027, 230006, 230035, 230053, 99991672})
# A reply whose parent was withdrawn or deleted: posted flat instead.
PARENT_GONE_CODES = frozenset({230011, 230110, 231003})


def retry_after(headers: Mapping[str, str]) -> float:
    """The reset header's seconds; a missing or odd value waits the default."""
    try:
        seconds = float(headers.get(RESET_HEADER, ""))
    except ValueError:
        return DEFAULT_RETRY_AFTER
    return seconds if 0 < seconds < 3600 else DEFAULT_RETRY_AFTER


def parent_gone(outcome: Outcome) -> bool:
    """Whether a refused reply names a parent that is withdrawn or deleted."""
    if not isinstance(outcome, Rejected):
        return False
    code = outcome.reason.split(" ", 1)[0]
    return code.isdigit() and int(code) in PARENT_GONE_CODES


def outcome_of(status: int, code: int | None, message: str, headers: Mapping[str, str]) -> Outcome:
    """A refused request's outcome."""
    reason = f"{code} {message}".strip() if code is not None else f"HTTP {status} {message}".strip()
    if status == 429 or code == RATE_LIMITED:
        return RetryAfter(retry_after(headers), reason)
    if code == CHAT_RATE_LIMITED:
        return RetryAfter(CHAT_RETRY_AFTER, reason)
    if code in GONE_CODES:
        return Gone(reason)
    if code in BLOCKED_CODES:
        return Blocked(reason)
    if status >= 500 or code is None:
        return Transient(reason)
    return Rejected(reason)
