"""Structured logs: one JSON line per event on stderr, secrets redacted.

`log(logger, "digest.sent", destination="verl-daily", messages=3)` writes
`{"ts": ..., "level": "info", "event": "digest.sent", "destination": "verl-daily", "messages": 3}`.
Known secret values (tokens from the environment) are replaced by `[redacted]` in every line,
whatever field or exception text they end up in.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from bot.core.logs import log, observe

__all__ = ["JsonFormatter", "TextFormatter", "log", "observe", "setup_logging"]

_TOKEN_SHAPES = re.compile(
    r"(xox[abposr]-[A-Za-z0-9-]{6,}|xapp-[A-Za-z0-9-]{6,}|\b\d{6,12}:[A-Za-z0-9_-]{30,}\b|"
    r"(?<=/bot)\d{3,}:[A-Za-z0-9_-]+)"
)


class _Redactor:
    def __init__(self) -> None:
        self.secrets: list[str] = []

    def add(self, values: Iterable[str]) -> None:
        for value in values:
            if value and len(value) >= 4 and value not in self.secrets:
                self.secrets.append(value)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "[redacted]")
        return _TOKEN_SHAPES.sub("[redacted]", text)


redact = _Redactor()


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": getattr(record, "event", None) or record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update(fields)
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return redact(json.dumps(line, ensure_ascii=False, default=str))


class TextFormatter(JsonFormatter):
    """For a person at a terminal: `10:57:42 info  digest.planned destination=console`."""

    def format(self, record: logging.LogRecord) -> str:
        line = json.loads(super().format(record))
        head = f"{line.pop('ts')[11:19]} {line.pop('level'):7} {line.pop('event')}"
        line.pop("logger", None)
        error = line.pop("error", None)
        rest = " ".join(f"{k}={v}" for k, v in line.items())
        text = f"{head} {rest}".rstrip() + (f"\n{error}" if error else "")
        return redact(text)


def setup_logging(
    level: str = "INFO", secrets: Iterable[str] = (), log_format: str | None = None
) -> None:
    """JSON lines, or readable text when stderr is a terminal (BOT_LOG_FORMAT overrides)."""
    redact.add(secrets)
    handler = logging.StreamHandler(sys.stderr)
    chosen = log_format or ("text" if sys.stderr.isatty() else "json")
    handler.setFormatter(TextFormatter() if chosen == "text" else JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("httpx", "httpcore", "aiosqlite", "apscheduler", "uvicorn.access", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
