"""10,000 fuzzed Slack signatures and timestamps: none accepted, never an HTTP 500.

Each request is a real slash command body sent to the service's real Starlette app (over ASGI,
fake Slack behind it) with its signing headers damaged one random way: a stale or future
timestamp signed with the right secret, malformed timestamps (letters, 5,000 digits, other
scripts' digits, signs, spaces), forged signatures (wrong secret, flipped or missing
characters, another version, another body or timestamp, non-ASCII bytes), missing headers.
A bolt middleware spy proves no listener ran. Genuine requests are mixed in, and must pass:
the harness can see an acceptance when there is one. Each reaches a listener or is answered
"busy": under the flood, answers wait until no request is left to acknowledge
(adapters/slack/ack_gate.py), so the work queue fills and refuses, as it is meant to.

Sample: 300 requests in `make test`; `pytest -m faults`: 10,000.
"""

from __future__ import annotations

import math
import random
import string
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest

from bot.adapters.slack.adapter import EVENTS_PATH, SlackAdapter
from tests.kits.faults import counts, report_line
from tests.kits.slack import SIGNING_SECRET, SlackBot, signed_headers, slack_bot, slash_body

GENUINE_EVERY = 50
Headers = dict[str, str | bytes]


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with slack_bot(tmp_path, seed=False) as running:
        yield running


@pytest.fixture
def handled(bot: SlackBot) -> list[dict[str, Any]]:
    return bot.handled_bodies()


def _bad_timestamp(rng: random.Random, now: int) -> str:
    digits = str(now)
    makers: list[Callable[[], str]] = [
        lambda: "".join(rng.choices(string.ascii_letters + string.punctuation, k=8)),
        lambda: "9" * rng.randint(13, 6000),
        lambda: "".join(chr(0x660 + int(d)) for d in digits),  # Arabic-Indic digits
        lambda: "".join(chr(0xFF10 + int(d)) for d in digits),  # fullwidth digits
        lambda: f"-{digits}",
        lambda: f"+{digits}",
        lambda: f" {digits} ",
        lambda: f"{digits}.0",
        lambda: f"{now:e}",
        lambda: "",
        lambda: "0x" + format(now, "x"),
        lambda: digits + "\u0663",
    ]
    return rng.choice(makers)()


def _flip(signature: str, rng: random.Random) -> str:
    position = rng.randrange(3, len(signature))
    choices = "0123456789abcdef".replace(signature[position], "")
    return signature[:position] + rng.choice(choices) + signature[position + 1 :]


def _forged_signature(rng: random.Random, body: bytes, now: int) -> Headers:
    headers: Headers = dict(signed_headers(body, timestamp=str(now)))
    genuine = str(headers["X-Slack-Signature"])
    forgeries: list[Callable[[], str | bytes]] = [
        lambda: str(signed_headers(body, secret=SIGNING_SECRET + "x")["X-Slack-Signature"]),
        lambda: _flip(genuine, rng),
        lambda: genuine[: rng.randrange(0, len(genuine))],
        lambda: genuine + rng.choice("0af"),
        lambda: "v1=" + genuine[3:],
        lambda: genuine.upper(),
        lambda: "v0=" + "".join(rng.choices("0123456789abcdef", k=64)),
        lambda: str(signed_headers(body + b"&x=1")["X-Slack-Signature"]),
        lambda: str(signed_headers(body, timestamp=str(now - 1))["X-Slack-Signature"]),
        lambda: bytes(rng.randrange(128, 256) for _ in range(67)),
        lambda: "",
    ]
    headers["X-Slack-Signature"] = rng.choice(forgeries)()
    return headers


def on_the_wire(headers: Headers) -> dict[bytes, bytes]:
    """Headers as bytes, str ones UTF-8 encoded (what a client without ASCII checks sends)."""
    return {
        name.encode(): value if isinstance(value, bytes) else value.encode()
        for name, value in headers.items()
    }


def damaged_request(rng: random.Random, body: bytes) -> tuple[str, bytes, Headers]:
    """(kind, body, headers): one way a request Slack did not sign can look."""
    now = int(time.time())
    kind = rng.choice(["stale", "future", "malformed_ts", "forged", "tampered_body", "missing"])
    headers: Headers
    if kind == "stale":
        headers = dict(signed_headers(body, timestamp=str(now - rng.randint(301, 10**7))))
    elif kind == "future":
        ahead = math.ceil(time.time()) + rng.randint(301, 10**7)  # not 300 s once a second ticks
        headers = dict(signed_headers(body, timestamp=str(ahead)))
    elif kind == "malformed_ts":
        timestamp = _bad_timestamp(rng, now)
        signature = signed_headers(body, timestamp=timestamp.strip() or "0")["X-Slack-Signature"]
        headers = {**signed_headers(body), "X-Slack-Signature": signature}
        headers["X-Slack-Request-Timestamp"] = timestamp.encode("utf-8")
    elif kind == "forged":
        headers = _forged_signature(rng, body, now)
    elif kind == "tampered_body":
        headers = dict(signed_headers(body))
        body = body.replace(b"text=help", b"text=" + rng.choice([b"subscribe+all", b"help+"]))
    else:
        headers = dict(signed_headers(body))
        del headers[rng.choice(["X-Slack-Signature", "X-Slack-Request-Timestamp"])]
    return kind, body, headers


@pytest.mark.parametrize("count", counts(300, 10_000))
async def test_no_fuzzed_signature_is_accepted_and_none_crashes_the_endpoint(
    count: int, bot: SlackBot, handled: list[dict[str, Any]]
) -> None:
    rng = random.Random(f"signatures-{count}")
    _, url = bot.response_url()
    statuses: Counter[int] = Counter()
    accepted: list[str] = []
    kinds: Counter[str] = Counter()
    genuine_passed = busy = 0
    triggers: set[str] = set()  # the genuine requests'
    adapter = next(a for a in bot.service.adapters if isinstance(a, SlackAdapter))
    busy_ack = adapter.listeners.busy_ack
    for number in range(count):
        body = slash_body("help", url)
        if number % GENUINE_EVERY == 0:
            # each from a person and a chat of their own (one person's 200 would spend their
            # budget of answers), with its own response_url (Slack takes 5 answers on one)
            who = dict(channel=f"C0GENUINE{number}", user=f"U0GENUINE{number}")
            _, answer_to = bot.response_url(**who)
            signed = slash_body("help", answer_to, **who)
            triggers.add(parse_qs(signed.decode())["trigger_id"][0])
            response = await bot.http.post(
                EVENTS_PATH, content=signed, headers=signed_headers(signed)
            )
            genuine_passed += response.status_code == 200
            busy += bool(response.content) and response.json() == busy_ack
            body = slash_body("help", url)
        kind, sent_body, headers = damaged_request(rng, body)
        kinds[kind] += 1
        seen = len(handled)
        response = await bot.http.post(EVENTS_PATH, content=sent_body, headers=on_the_wire(headers))
        statuses[response.status_code] += 1
        if response.status_code < 400 or len(handled) > seen:
            accepted.append(f"{kind}: {headers!r}"[:300])
    genuine = len(range(0, count, GENUINE_EVERY))
    summary = report_line(
        "signatures",
        fuzzed=sum(kinds.values()),
        accepted=len(accepted),
        http_5xx=sum(n for status, n in statuses.items() if status >= 500),
        statuses=dict(statuses),
        genuine_passed=f"{genuine_passed}/{genuine}",
        genuine_handled=len(handled),
        genuine_busy=busy,
    )
    print(summary)
    assert genuine_passed == genuine, summary
    reached = {body["trigger_id"] for body in handled}
    assert reached <= triggers, f"a listener ran for a forged request: {summary}"
    assert len(handled) + busy == genuine, f"a genuine request was lost: {summary}"
    assert handled, f"no genuine request reached a listener: {summary}"
    assert not accepted, f"{summary}\n{accepted[:5]}"
    assert set(statuses) == {401}, summary
