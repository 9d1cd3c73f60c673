"""`POST /slack/events` lets through only what Slack signed, and never answers 500 to garbage.

Every request goes through the service's real Starlette app; a bolt middleware spy records
whether any handler ran, so a 401 is proven to have stopped the request before bolt's listeners.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.adapters.slack.adapter import EVENTS_PATH, SlackAdapter, SlackSettings
from bot.settings import ConfigError
from tests.kits.slack import (
    SIGNING_SECRET,
    SlackBot,
    signed_headers,
    slack_bot,
    slash_body,
)


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with slack_bot(tmp_path, seed=False) as running:
        yield running


@pytest.fixture
def handled(bot: SlackBot) -> list[dict[str, Any]]:
    return bot.handled_bodies()


def _help_command(bot: SlackBot) -> bytes:
    _, url = bot.response_url()
    return slash_body("help", url)


async def _post(bot: SlackBot, body: bytes, headers: dict[str, str]) -> int:
    raw = {name.encode(): value.encode() for name, value in headers.items()}  # UTF-8 on the wire
    response = await bot.http.post(EVENTS_PATH, content=body, headers=raw)
    return response.status_code


async def test_a_validly_signed_command_is_handled(
    bot: SlackBot, handled: list[dict[str, Any]]
) -> None:
    body = _help_command(bot)
    assert await _post(bot, body, signed_headers(body)) == 200
    assert [b["command"] for b in handled] == ["/pr"]


def _flip(signature: str) -> str:
    last = signature[-1]
    return signature[:-1] + ("0" if last != "0" else "1")


def _tampered(case: str, body: bytes) -> dict[str, str]:
    now = int(time.time())
    match case:
        case "stale_301s":
            return signed_headers(body, timestamp=str(now - 301))
        case "future_301s":
            # From the next whole second: `now` rounded down would be only 300 s ahead once
            # the clock ticks over before the check.
            return signed_headers(body, timestamp=str(math.ceil(time.time()) + 301))
        case "wrong_secret":
            return signed_headers(body, secret="not-" + SIGNING_SECRET)
        case "one_flipped_character":
            headers = signed_headers(body)
            return {**headers, "X-Slack-Signature": _flip(headers["X-Slack-Signature"])}
        case "missing_signature":
            headers = signed_headers(body)
            del headers["X-Slack-Signature"]
            return headers
        case "missing_timestamp":
            headers = signed_headers(body)
            del headers["X-Slack-Request-Timestamp"]
            return headers
        case "timestamp_abc":
            return signed_headers(body, timestamp="abc")
        case "timestamp_5000_digits":
            return signed_headers(body, timestamp="1" * 5000)
        case "arabic_indic_digits":
            return signed_headers(body, timestamp="".join(chr(0x660 + int(d)) for d in str(now)))
    raise AssertionError(case)


@pytest.mark.parametrize(
    "case",
    [
        "stale_301s",
        "future_301s",
        "wrong_secret",
        "one_flipped_character",
        "missing_signature",
        "missing_timestamp",
        "timestamp_abc",
        "timestamp_5000_digits",
        "arabic_indic_digits",
    ],
)
async def test_a_request_slack_did_not_sign_is_refused_before_any_handler(
    bot: SlackBot, handled: list[dict[str, Any]], case: str
) -> None:
    body = _help_command(bot)
    assert await _post(bot, body, _tampered(case, body)) == 401
    assert handled == []
    assert bot.fake.calls("response_url") == []


async def test_a_signature_for_another_body_is_refused(
    bot: SlackBot, handled: list[dict[str, Any]]
) -> None:
    body = _help_command(bot)
    headers = signed_headers(body)
    forged = body.replace(b"text=help", b"text=subscribe+all")
    assert await _post(bot, forged, headers) == 401
    assert handled == []


async def test_a_signature_just_inside_the_window_is_accepted(
    bot: SlackBot, handled: list[dict[str, Any]]
) -> None:
    body = _help_command(bot)
    headers = signed_headers(body, timestamp=str(int(time.time()) - 290))
    assert await _post(bot, body, headers) == 200
    assert len(handled) == 1


async def test_an_oversized_body_is_refused_unread(
    bot: SlackBot, handled: list[dict[str, Any]]
) -> None:
    body = b"text=" + b"a" * (2 * 1024 * 1024)
    assert await _post(bot, body, signed_headers(body)) == 413
    assert handled == []


async def test_slacks_url_verification_challenge_is_answered(bot: SlackBot) -> None:
    body = json.dumps({"type": "url_verification", "challenge": "3eZbrw1aBm2rZgRNFdxV"}).encode()
    headers = signed_headers(body, content_type="application/json")
    response = await bot.http.post(EVENTS_PATH, content=body, headers=headers)
    assert response.status_code == 200
    assert "3eZbrw1aBm2rZgRNFdxV" in response.text


class RecordingSocket:
    def __init__(self) -> None:
        self.events: list[str] = []

    async def connect_async(self) -> None:
        self.events.append("connect")

    async def close_async(self) -> None:
        self.events.append("close")


def _adapter(bot: SlackBot, settings: SlackSettings, socket: RecordingSocket) -> SlackAdapter:
    return SlackAdapter(
        bot.service.adapter_deps, settings, socket_handler_factory=lambda app, token: socket
    )


async def test_an_app_token_switches_to_socket_mode_with_no_route(bot: SlackBot) -> None:
    socket = RecordingSocket()
    settings = SlackSettings(bot_token="xoxb-1", api_url=bot.fake.api_url, app_token="xapp-1")
    adapter = _adapter(bot, settings, socket)
    assert adapter.mode == "socket"
    assert adapter.routes() == []
    await adapter.start()
    await adapter.stop()
    assert socket.events == ["connect", "close"]


async def test_without_an_app_token_the_events_route_is_served(bot: SlackBot) -> None:
    socket = RecordingSocket()
    settings = SlackSettings(bot_token="xoxb-1", api_url=bot.fake.api_url, signing_secret="s")
    adapter = _adapter(bot, settings, socket)
    assert adapter.mode == "http"
    assert [getattr(r, "path", None) for r in adapter.routes()] == [EVENTS_PATH]
    await adapter.start()
    await adapter.stop()
    assert socket.events == []


async def test_http_mode_without_a_signing_secret_fails_at_start(bot: SlackBot) -> None:
    settings = SlackSettings(bot_token="xoxb-1", api_url=bot.fake.api_url)
    with pytest.raises(ConfigError, match="SLACK_SIGNING_SECRET"):
        _adapter(bot, settings, RecordingSocket())


async def test_a_start_with_the_token_in_the_environment_logs_nothing_that_needs_no_action(
    bot: SlackBot, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")  # as deployments set it; bolt reads it too
    settings = SlackSettings(bot_token="xoxb-1", api_url=bot.fake.api_url, signing_secret="s")
    with caplog.at_level(logging.DEBUG, logger="prdigest.slack.bolt"):
        adapter = _adapter(bot, settings, RecordingSocket())
        await adapter.start()
        await adapter.stop()
    bolt = [r.getMessage() for r in caplog.records if r.name.startswith("prdigest.slack.bolt")]
    assert not [line for line in bolt if "will be unused" in line], bolt
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
