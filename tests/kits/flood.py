"""A flood of chat requests at one platform's webhook, from a process of its own.

`python -m tests.kits.flood --setup FILE` reads a JSON setup (the bot's URL, the platform,
connections, seconds, the secret, the fake's response_url base) and opens that many
keep-alive connections on loopback, each sending as fast as the bot answers: signed `/pr 7422`
slash commands from one Slack user per connection, or Telegram `/find rollout` updates from
one private chat per connection. It stops after `seconds` once each connection has sent at
least `least` requests (a count that holds however slowly a loaded machine runs it), or when
the bot closes its connections (SIGTERM), and prints one JSON line: requests, statuses, busy
answers, the slowest answer. A process of its own, so the flood's own CPU does not stall the test's
measurements (its event loop serves the fakes and times `/healthz`); and a nice one
(FLOOD_NICENESS): a real flood comes from other machines, and here the clients share the
bot's CPUs, where at the same priority they would take the bot's turns away from it (two
busy clients and the bot on two CPUs) and the probe would time the clients, not the bot.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

SLACK_PATH = "/slack/events"
TELEGRAM_PATH = "/telegram/webhook"
KEYS_PER_CONNECTION = 50  # response_url keys the test registered per connection
SLACK_CHANNEL = "C0FLOOD"
FLOOD_NICENESS = 10  # the clients yield the CPUs to the bot (see the module docstring)


def slack_user(connection: int) -> str:
    return f"U0FLOOD{connection}"


def telegram_user(connection: int) -> int:
    return 700_000 + connection


def response_key(connection: int, number: int) -> str:
    return f"F{connection}-{number % KEYS_PER_CONNECTION}"


@dataclass
class Figures:
    requests: int = 0
    busy: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    slowest: float = 0.0
    errors: int = 0


@dataclass(frozen=True)
class Setup:
    url: str
    platform: str
    connections: int
    seconds: float
    secret: str
    response_base: str = ""
    least: int = 0  # requests each connection sends at least, however long they take

    def request(self, connection: int, number: int) -> bytes:
        host = urlsplit(self.url).netloc
        if self.platform == "slack":
            body, headers = self._slack(connection, number)
            path = SLACK_PATH
        else:
            body, headers = self._telegram(connection, number)
            path = TELEGRAM_PATH
        head = [f"POST {path} HTTP/1.1", f"Host: {host}", f"Content-Length: {len(body)}"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        return ("\r\n".join(head) + "\r\n\r\n").encode() + body

    def _slack(self, connection: int, number: int) -> tuple[bytes, dict[str, str]]:
        user = slack_user(connection)
        fields = {
            "team_id": "T0TEST",
            "channel_id": SLACK_CHANNEL,
            "user_id": user,
            "user_name": user.lower(),
            "command": "/pr",
            "text": "7422",
            "api_app_id": "A0TEST",
            "response_url": f"{self.response_base}/response/{response_key(connection, number)}",
            "trigger_id": f"1337.{connection}.{number}",
        }
        body = urlencode(fields).encode()
        ts = str(int(time.time()))
        mac = hmac.new(self.secret.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256)
        return body, {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": f"v0={mac.hexdigest()}",
        }

    def _telegram(self, connection: int, number: int) -> tuple[bytes, dict[str, str]]:
        user = telegram_user(connection)
        person = {"id": user, "is_bot": False, "first_name": f"u{connection}"}
        message = {
            "message_id": number + 1,
            "from": person,
            "chat": {"id": user, "type": "private", "first_name": f"u{connection}"},
            "date": int(time.time()),
            "text": "/find rollout",
            "entities": [{"type": "bot_command", "offset": 0, "length": 5}],
        }
        update = {"update_id": connection * 1_000_000 + number, "message": message}
        headers = {
            "Content-Type": "application/json",
            "X-Telegram-Bot-Api-Secret-Token": self.secret,
        }
        return json.dumps(update).encode(), headers


async def _answer(reader: asyncio.StreamReader) -> tuple[int, bytes, bool]:
    """(status, body, whether the server closes the connection) of one response."""
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionResetError("closed")
    status = int(status_line.split()[1])
    length, closing = 0, False
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        if name.lower() == "content-length":
            length = int(value)
        elif name.lower() == "connection" and value.strip().lower() == "close":
            closing = True
    return status, await reader.readexactly(length), closing


async def _connection(setup: Setup, connection: int, figures: Figures, end: float) -> None:
    parts = urlsplit(setup.url)
    number = 0
    writer: asyncio.StreamWriter | None = None
    try:
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        while time.monotonic() < end or number < setup.least:
            started = time.monotonic()
            writer.write(setup.request(connection, number))
            status, body, closing = await _answer(reader)
            figures.slowest = max(figures.slowest, time.monotonic() - started)
            figures.requests += 1
            figures.statuses[str(status)] += 1
            figures.busy += b"busy" in body
            number += 1
            if closing:
                return
    except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
        figures.errors += 1  # the bot closed the connection (it is stopping)
    finally:
        if writer is not None:
            writer.close()


async def flood(setup: Setup) -> Figures:
    figures = Figures()
    end = time.monotonic() + setup.seconds
    await asyncio.gather(*(_connection(setup, n, figures, end) for n in range(setup.connections)))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--setup", type=Path, required=True)
    args = parser.parse_args()
    os.nice(FLOOD_NICENESS)
    data: dict[str, Any] = json.loads(args.setup.read_text(encoding="utf-8"))
    figures = asyncio.run(flood(Setup(**data)))
    summary = {
        "requests": figures.requests,
        "busy": figures.busy,
        "statuses": dict(figures.statuses),
        "slowest": round(figures.slowest, 3),
        "errors": figures.errors,
    }
    sys.stdout.write(json.dumps(summary) + "\n")


if __name__ == "__main__":
    main()
