"""Slack request signatures, checked before bolt sees the request.

Bolt verifies too, but its verifier calls `int()` on the timestamp header, so `abc` or a
5,000-digit value (past Python's 4,300-digit limit) raises and bolt answers 500. Slack then
retries, and a probe learns that the endpoint breaks on garbage. Here every malformed header
is simply "not signed" (401), and the comparison is constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable, Mapping

SIGNATURE_MAX_AGE_SECONDS = 300  # Slack's rule: refuse requests older (or newer) than 5 minutes
TIMESTAMP_MAX_DIGITS = 12  # Unix seconds have 10 digits until the year 2286
SIGNATURE_VERSION = "v0"
TIMESTAMP_HEADER = "x-slack-request-timestamp"
SIGNATURE_HEADER = "x-slack-signature"


def expected_signature(secret: str, timestamp: str, body: bytes) -> str:
    base = f"{SIGNATURE_VERSION}:{timestamp}:".encode() + body
    digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return f"{SIGNATURE_VERSION}={digest}"


def _timestamp(value: str) -> int | None:
    """Unix seconds from the header, or None for anything that is not a short ASCII number."""
    if not value or len(value) > TIMESTAMP_MAX_DIGITS:
        return None
    if not (value.isascii() and value.isdigit()):
        return None
    return int(value)


class SlackSignature:
    """Checks `X-Slack-Signature` against the signing secret, within the 5-minute window."""

    def __init__(self, secret: str, clock: Callable[[], float] = time.time) -> None:
        if not secret:
            raise ValueError("the Slack signing secret is empty")
        self._secret = secret
        self._clock = clock

    def is_valid(self, headers: Mapping[str, str], body: bytes) -> bool:
        raw_timestamp = headers.get(TIMESTAMP_HEADER, "")
        signature = headers.get(SIGNATURE_HEADER, "")
        timestamp = _timestamp(raw_timestamp)
        if timestamp is None or not signature:
            return False
        if abs(self._clock() - timestamp) > SIGNATURE_MAX_AGE_SECONDS:
            return False
        expected = expected_signature(self._secret, raw_timestamp, body)
        # Header values arrive latin-1 decoded; compare bytes so any character is comparable.
        return hmac.compare_digest(expected.encode(), signature.encode("latin-1", "replace"))
