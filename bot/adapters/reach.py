"""How a platform that cannot be reached is told in the log, the same for Slack and Telegram.

A DNS or connect failure (or a platform answering with its edge's HTML error page) is not a
refused token: it is logged as `<platform>.unreachable` with the words "cannot reach <host>",
the host taken from the configured API URL (SLACK_API_URL, TELEGRAM_API_URL), and a one-line
reason.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from bot.logs import log

MAX_REASON_CHARS = 300


def api_host(api_url: str) -> str:
    """`slack.com` for https://slack.com/api/, `127.0.0.1:8081` for a local fake."""
    return urlsplit(api_url).netloc or api_url


def one_line(exc: BaseException) -> str:
    """`ClientConnectorError: Cannot connect to host ...`, whitespace folded, capped."""
    detail = " ".join(str(exc).split())
    text = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    return text[:MAX_REASON_CHARS]


def log_unreachable(
    logger: logging.Logger,
    platform: str,
    api_url: str,
    reason: str,
    level: int = logging.WARNING,
    **fields: object,
) -> None:
    host = api_host(api_url)
    log(
        logger,
        f"{platform}.unreachable",
        level,
        message=f"cannot reach {host}",
        host=host,
        reason=reason,
        **fields,
    )
