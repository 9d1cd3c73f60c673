"""What a failed Slack Web API call said, read safely.

Slack answers JSON (`{"ok": false, "error": "..."}`), but in front of it a proxy or Slack's own
edge may answer an error page (a 502, a 503). slack_sdk then raises SlackApiError whose
`response.data` is a string (`text/plain`) or empty (`text/html`), or whose `response` is the
raw aiohttp response (a body labelled JSON that is not); `exc.response.get(...)` would raise
inside the error handler. Such an answer is Slack being down, the same as a 5xx.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.errors import SlackApiError

NOT_AN_API_ANSWER = "not a Slack API answer: Slack is down"


def _data(exc: SlackApiError) -> Any:
    return getattr(exc.response, "data", None)


def status_of(exc: SlackApiError) -> int:
    """The HTTP status, whichever response object slack_sdk put in the error."""
    response = exc.response
    status = getattr(response, "status_code", None)
    if status is None:
        status = getattr(response, "status", 0)  # aiohttp's ClientResponse
    return int(status or 0)


def error_code(exc: SlackApiError) -> str:
    """Slack's `error` field, or "" when the answer had none (or was not Slack's JSON)."""
    data = _data(exc)
    return str(data.get("error", "") or "") if isinstance(data, dict) else ""


def is_down(exc: SlackApiError) -> bool:
    """A 5xx, or any answer that is not Slack's JSON: the platform is down."""
    return status_of(exc) >= 500 or not error_code(exc)


def reason(exc: SlackApiError) -> str:
    """One line for the log: Slack's error code, or the status and why there is none."""
    code = error_code(exc)
    if code:
        return code
    return f"HTTP {status_of(exc)} ({NOT_AN_API_ANSWER})"


def headers_of(exc: SlackApiError) -> dict[str, str]:
    headers = getattr(exc.response, "headers", None) or {}
    return {str(k).lower(): str(v) for k, v in headers.items()}
