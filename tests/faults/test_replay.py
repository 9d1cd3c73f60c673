"""Captured Slack requests replayed: every genuine one handled once, no replay ever.

Genuine signed requests (an admin's `/pr subscribe`, a user's `/pr 7422`, an `@prdigest`
mention) go to the service's real web app, fake Slack behind it. Each is captured as sent
(body and headers) and replayed k times (1..3) at random moments inside its 5-minute
signature window, interleaved with the other requests, and once just outside the window. The
service's clock is moved to each moment (the signature check reads it); bolt's own check reads
the real clock, but no replay may get that far.

Promise: every genuine request is answered exactly once (one response_url answer per command,
one announcement per subscribe, one thread reply per mention), 0 replays handled, 0 HTTP 500;
a replay inside the window is acknowledged (200), one outside it is refused (401).

Sample: 30 genuine requests in `make test`; `pytest -m faults`: 600.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.adapters.slack.adapter import EVENTS_PATH, SlackAdapter
from bot.adapters.slack.verify import SIGNATURE_MAX_AGE_SECONDS
from bot.core.clock import utc_clock
from bot.service.app import Service
from tests.fakes.slack.api import FakeSlack
from tests.kits.faults import counts, report_line
from tests.kits.slack import (
    ADMIN,
    CHANNEL,
    FORM,
    USER,
    bot_config,
    channel_posts,
    event_body,
    mention_event,
    signed_headers,
    slack_bot,
    slash_body,
)

MAX_REPLAYS = 3
WINDOW_MARGIN_SECONDS = 5  # replays land at most this close to the window's edge
JSON = "application/json"


@dataclass
class MovableClock:
    """The service's clock: real time plus an offset a test moves."""

    offset: timedelta = timedelta(0)

    def __call__(self) -> datetime:
        return utc_clock() + self.offset


@dataclass
class Captured:
    kind: str  # "subscribe", "pr" or "mention"
    body: bytes
    headers: dict[str, str]
    answer_key: str = ""  # the response_url key (commands) or the thread ts (mentions)


@dataclass
class Run:
    fake: FakeSlack
    service: Service
    http: httpx.AsyncClient
    clock: MovableClock
    statuses: Counter[str] = field(default_factory=Counter)

    async def send(self, request: Captured, label: str, age: float | None = None) -> int:
        """Send `request` when it is `age` seconds old (its signature's timestamp + `age`,
        on the service's clock), or now."""
        signed_at = int(request.headers["X-Slack-Request-Timestamp"])
        ahead = 0.0 if age is None else signed_at + age - time.time()
        self.clock.offset = timedelta(seconds=ahead)
        response = await self.http.post(EVENTS_PATH, content=request.body, headers=request.headers)
        self.statuses[f"{label} {response.status_code}"] += 1
        return response.status_code


@asynccontextmanager
async def running(tmp_path: Path) -> AsyncIterator[Run]:
    """tests.kits.slack.slack_bot, with the service's clock movable."""
    clock = MovableClock()
    # Two users sending hundreds of requests a second: far past the per-user rate and the
    # queue a real team needs (tests/faults/test_flood.py holds those), past the one search
    # a person may run at once (the admin's subscribes overlap in the workers, and a second
    # one is rightly answered "your previous search is still running"), and past the 50
    # subscriptions a channel may hold (the full run subscribes ~200 times); here every
    # request must be taken and run, to see that each is handled once.
    limits = {"queue_length": 10_000, "per_user_burst": 1_000, "per_user_per_minute": 60_000}
    searches = {"max_concurrent": 256, "max_per_user": 256}
    caps = {"per_destination": 10_000, "per_person": 10_000}
    config = bot_config(chat_work=limits, search=searches, subscription_limits=caps)
    async with slack_bot(tmp_path, config, clock=clock) as bot:
        bot.fake.add_user(ADMIN, name="root")
        yield Run(bot.fake, bot.service, bot.http, clock)


def genuine(run: Run, number: int, rng: random.Random) -> Captured:
    kind = rng.choice(["subscribe", "pr", "mention"])
    if kind == "mention":
        ts = f"1700000000.{number:06d}"
        body = event_body(mention_event("7422", ts=ts), f"Ev0REPLAY{number}")
        return Captured(kind, body, signed_headers(body, content_type=JSON), ts)
    key = f"R{number}"
    url = run.fake.response_url(key, channel=CHANNEL, user=ADMIN)
    text, user = ("subscribe", ADMIN) if kind == "subscribe" else ("7422", USER)
    text = f"subscribe t{number}" if kind == "subscribe" else text
    body = slash_body(text, url, user=user)
    return Captured(kind, body, signed_headers(body, content_type=FORM), key)


def _inside(rng: random.Random) -> float:
    """A random age inside the signature window."""
    return rng.uniform(0, SIGNATURE_MAX_AGE_SECONDS - WINDOW_MARGIN_SECONDS)


def answers_for(run: Run, request: Captured) -> int:
    if request.kind == "mention":
        return sum(m.thread_ts == request.answer_key for m in channel_posts(run.fake, CHANNEL))
    path = f"/response/{request.answer_key}"
    return sum(c.path == path and c.ok for c in run.fake.calls("response_url"))


@pytest.mark.parametrize("count", counts(30, 600))
async def test_replayed_requests_are_never_handled_and_genuine_ones_once(
    count: int, tmp_path: Path
) -> None:
    rng = random.Random(f"replay-{count}")
    started = time.monotonic()
    async with running(tmp_path) as run:
        captured: list[Captured] = []
        replays: list[Captured] = []
        for number in range(1, count + 1):
            request = genuine(run, number, rng)
            status = await run.send(request, "genuine")
            assert status == 200, run.statuses
            captured.append(request)
            replays += [request] * rng.randint(1, MAX_REPLAYS)
            # Replays already due go now, interleaved with the next genuine requests.
            rng.shuffle(replays)
            while replays and rng.random() < 0.5:
                await run.send(replays.pop(), "replay", _inside(rng))
        for request in replays:
            await run.send(request, "replay", _inside(rng))
        for request in captured:  # once more, just after the window closed
            await run.send(request, "late", SIGNATURE_MAX_AGE_SECONDS + WINDOW_MARGIN_SECONDS)
        adapter = next(a for a in run.service.adapters if isinstance(a, SlackAdapter))
        await adapter.listeners.work.idle(120)
        run.clock.offset = timedelta(0)
        handled = Counter(answers_for(run, request) for request in captured)
        subscribes = sum(request.kind == "subscribe" for request in captured)
        announced = [m for m in channel_posts(run.fake, CHANNEL) if m.thread_ts is None]
        violations = list(run.fake.violations)
    statuses: dict[str, Any] = dict(sorted(run.statuses.items()))
    summary = report_line(
        "replay",
        genuine=count,
        replays=statuses.get("replay 200", 0) + statuses.get("late 401", 0),
        handled_once=f"{handled[1]}/{count}",
        replays_handled=sum((n - 1) * k for n, k in handled.items() if n > 1),
        http_5xx=sum(n for label, n in statuses.items() if int(label.split()[-1]) >= 500),
        statuses=statuses,
        seconds=round(time.monotonic() - started, 1),
    )
    print(summary)
    assert handled == Counter({1: count}), summary
    assert len(announced) == subscribes, summary
    assert set(statuses) <= {"genuine 200", "replay 200", "late 401"}, summary
    assert violations == [], summary
