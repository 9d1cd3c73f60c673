"""A flood of chat requests on both webhooks: bounded work, a prompt newcomer, a prompt stop.

`prdigest run` serves Slack (HTTP mode) and Telegram (webhook mode) against the strict
fakes, on a SQLite store with the seed report. Two flood processes (tests/kits/flood.py) each
hold `connections` keep-alive connections on loopback for `seconds`: signed `/pr 7422` slash
commands from one Slack user per connection, Telegram `/find rollout` updates from one
private chat per connection, each sent as soon as the previous one is answered. Meanwhile
this process times `GET /healthz` (a new connection each time, from a thread of its own).

Promise: every request is answered 200 (taken, or "busy" at once: Slack's 3 s ack rule
holds); once the flood stops, a new user's `/pr 7422` is answered within 3 s on each
platform; `/healthz` p99 ≤ 100 ms during the flood; the bot's peak RSS (VmHWM) ≤ 300 MB;
SIGTERM sent during a second, short flood ends the process within 10 s, with exit status 0
and one `chat.work_dropped` log line per platform counting the queued answers dropped.

Sample in `make test`: 20 connections, each sending at least 20 requests (past a user's burst
of 10 however slowly a loaded machine sends them, so both bounds are reached) and for 1 s;
it holds every promise but `/healthz`'s 100 ms, which it shows only: the sample shares its
CPUs with the other tests. `pytest -m faults`: 200 connections for 15 s.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.core.reports.parse.parser import parse_file
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate
from tests.fakes.slack.api import FakeSlack
from tests.fakes.telegram.api import FakeTelegram
from tests.fakes.telegram.updates import message_update
from tests.kits.faults import FAULT_SCALE, report_line
from tests.kits.flood import (
    KEYS_PER_CONNECTION,
    SLACK_CHANNEL,
    response_key,
    slack_user,
    telegram_user,
)
from tests.kits.paths import ROOT, SEED
from tests.kits.proc import BotProcess
from tests.kits.slack import SIGNING_SECRET, signed_headers, slash_body
from tests.kits.telegram import WEBHOOK_SECRET, WEBHOOK_URL

pytestmark = pytest.mark.slow  # the sample runs with SLOW=1 (CI), the full count with -m faults

ANSWER_WITHIN_SECONDS = 3.0
HEALTHZ_P99_MS = 100.0
PEAK_RSS_MB = 300.0
EXIT_WITHIN_SECONDS = 10.0
SLACK_ACK_SECONDS = 3.0
PROBE_EVERY_SECONDS = 0.02
STOP_FLOOD_SECONDS = 3.0  # the flood SIGTERM is sent into
NEWCOMER_SLACK = "U0NEWCOMER"
NEWCOMER_TELEGRAM = 999_001


@dataclass(frozen=True)
class Scale:
    connections: int
    seconds: float
    least: int = 0  # requests each connection sends at least, however long that takes
    healthz_promised: bool = True  # the sample shares its CPUs with other tests: shown only


def scales() -> list[Any]:
    full = Scale(200, max(2.0, 15.0 * FAULT_SCALE))
    sample = Scale(20, 1.0, least=20, healthz_promised=False)
    return [
        pytest.param(sample, id="sample-20x20"),
        pytest.param(full, id="full-200x15s", marks=pytest.mark.faults),
    ]


async def seeded_store(db: Path) -> None:
    engine = create_engine(f"sqlite:///{db}")
    await migrate(engine)
    await ReportStore(engine).upsert(parse_file(SEED).report, source="test")
    await engine.dispose()


class HealthProbe:
    """`GET /healthz` every PROBE_EVERY_SECONDS on a new connection, from a thread: the
    latencies the bot gave, not this process's event loop."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.latencies: list[float] = []
        self.failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(PROBE_EVERY_SECONDS):
            started = time.perf_counter()
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
            try:
                connection.request("GET", "/healthz")
                ok = connection.getresponse().read() == b"ok"
            except OSError:
                ok = False
            finally:
                connection.close()
            if ok:
                self.latencies.append(time.perf_counter() - started)
            else:
                self.failures += 1

    def __enter__(self) -> HealthProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def p99_ms(self) -> float:
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def flood(bot: BotProcess, platform: str, scale: Scale, tmp: Path, **extra: str) -> Any:
    """Run one flood process to its end; its figures (tests/kits/flood.py)."""
    setup = tmp / f"flood-{platform}-{time.monotonic_ns()}.json"
    data = {"url": bot.url, "platform": platform, "connections": scale.connections,
            "seconds": scale.seconds, "least": scale.least, **extra}  # fmt: skip
    setup.write_text(json.dumps(data), encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.kits.flood", "--setup", str(setup),
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), scale.seconds + 60)
    assert proc.returncode == 0, err.decode()[-2000:]
    return json.loads(out)


async def until(found: Callable[[], bool], timeout: float) -> float:
    """Seconds until `found()`; AssertionError past `timeout`."""
    started = time.monotonic()
    while not found():
        assert time.monotonic() - started < timeout, f"not within {timeout} s"
        await asyncio.sleep(0.01)
    return time.monotonic() - started


async def slack_newcomer(bot: BotProcess, fake: FakeSlack) -> float:
    """Seconds from a new user's `/pr 7422` to its answer."""
    url = fake.response_url("NEWCOMER", channel=SLACK_CHANNEL, user=NEWCOMER_SLACK)
    body = slash_body("7422", url, channel=SLACK_CHANNEL, user=NEWCOMER_SLACK)
    started = time.monotonic()
    async with httpx.AsyncClient(base_url=bot.url, timeout=10) as http:
        response = await http.post("/slack/events", content=body, headers=signed_headers(body))
    assert response.status_code == 200 and response.content == b"", response.text

    def answered() -> bool:
        return any(c.path == "/response/NEWCOMER" and c.ok for c in fake.calls("response_url"))

    await until(answered, 30)
    return time.monotonic() - started


async def telegram_newcomer(bot: BotProcess, fake: FakeTelegram) -> float:
    """Seconds from a new chat's `/pr 7422` to the bot's answer in it."""
    update = {**message_update(fake.state, NEWCOMER_TELEGRAM, "/pr 7422", None)}
    update["update_id"] = 5_000_000_000
    headers = {"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET}
    started = time.monotonic()
    async with httpx.AsyncClient(base_url=bot.url, timeout=10) as http:
        response = await http.post("/telegram/webhook", json=update, headers=headers)
    assert response.status_code == 200 and response.content == b"", response.text
    await until(lambda: bool(fake.sent_to(NEWCOMER_TELEGRAM)), 30)
    return time.monotonic() - started


def peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
    assert found is not None, "no VmHWM in /proc/PID/status"
    return int(found[1]) / 1024


def dropped_lines(logs: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in logs.splitlines() if "chat.work_dropped" in line]
    return [line for line in lines if line.get("event") == "chat.work_dropped"]


def arrange(slack: FakeSlack, telegram: FakeTelegram, connections: int) -> None:
    slack.add_channel(SLACK_CHANNEL)
    for n in range(connections):
        for key in range(KEYS_PER_CONNECTION):
            slack.response_url(response_key(n, key), channel=SLACK_CHANNEL, user=slack_user(n))
        telegram.add_chat(telegram_user(n))
    telegram.add_chat(NEWCOMER_TELEGRAM)


def bot_env(env: dict[str, str], slack: FakeSlack, telegram: FakeTelegram, tmp: Path) -> None:
    config = tmp / "bot.yaml"
    config.write_text(
        f"timezone: UTC\nlocale: en\ntelegram: {{webhook_url: '{WEBHOOK_URL}'}}\n", "utf-8"
    )
    env.update(
        BOT_CONFIG=str(config),
        BOT_LOG_FORMAT="json",
        SLACK_BOT_TOKEN=slack.bot_token,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_API_URL=slack.api_url,
        TELEGRAM_BOT_TOKEN=telegram.token,
        TELEGRAM_API_URL=telegram.url,
        TELEGRAM_WEBHOOK_SECRET=WEBHOOK_SECRET,
    )


async def both_floods(bot: BotProcess, scale: Scale, tmp: Path, base: str) -> list[Any]:
    return list(
        await asyncio.gather(
            flood(bot, "slack", scale, tmp, secret=SIGNING_SECRET, response_base=base),
            flood(bot, "telegram", scale, tmp, secret=WEBHOOK_SECRET),
        )
    )


async def stop_during_a_flood(bot: BotProcess, scale: Scale, tmp: Path, base: str) -> float:
    """SIGTERM a moment into a short flood; seconds until the process has exited."""
    short = Scale(scale.connections, STOP_FLOOD_SECONDS)
    floods = asyncio.ensure_future(both_floods(bot, short, tmp, base))
    await asyncio.sleep(STOP_FLOOD_SECONDS / 2)
    started = time.monotonic()
    code = await bot.terminate(timeout=30)
    took = time.monotonic() - started
    await floods
    assert code == 0, bot.stderr.decode()[-3000:]
    return took


@pytest.mark.parametrize("scale", scales())
async def test_a_flood_of_commands_is_bounded_and_the_next_user_is_answered_promptly(
    scale: Scale, subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    await seeded_store(tmp_path / "bot.db")
    async with FakeSlack() as slack, FakeTelegram() as telegram:
        arrange(slack, telegram, scale.connections)
        bot_env(subprocess_env, slack, telegram, tmp_path)
        bot = BotProcess(subprocess_env)
        await bot.start()
        try:
            await bot.wait_ready()
            assert bot.proc is not None
            with HealthProbe(bot.port) as probe:
                floods = await both_floods(bot, scale, tmp_path, slack.base_url)
            slack_s, telegram_s = await asyncio.gather(
                slack_newcomer(bot, slack), telegram_newcomer(bot, telegram)
            )
            rss = peak_rss_mb(bot.proc.pid)
            stop_s = await stop_during_a_flood(bot, scale, tmp_path, slack.base_url)
        finally:
            if bot.proc is not None and bot.proc.returncode is None:
                await bot.kill()
    logs = bot.stderr.decode(errors="replace")
    dropped = {line["platform"]: line for line in dropped_lines(logs)}
    slack_flood, telegram_flood = floods
    summary = report_line(
        "flood",
        connections=scale.connections,
        seconds=scale.seconds,
        slack=f"{slack_flood['requests']} requests ({slack_flood['busy']} busy)",
        telegram=f"{telegram_flood['requests']} updates ({telegram_flood['busy']} busy)",
        slowest_ack_s=max(slack_flood["slowest"], telegram_flood["slowest"]),
        newcomer_s=f"{slack_s:.2f} Slack, {telegram_s:.2f} Telegram",
        healthz_p99_ms=round(probe.p99_ms(), 1),
        healthz_p50_ms=round(1000 * sorted(probe.latencies)[len(probe.latencies) // 2], 1),
        healthz_probes=len(probe.latencies),
        peak_rss_mb=round(rss),
        sigterm_exit_s=round(stop_s, 2),
        dropped={p: f["queued_answers_dropped"] for p, f in sorted(dropped.items())},
    )
    print(summary)
    for figures in floods:
        assert set(figures["statuses"]) == {"200"}, summary
    assert slack_flood["slowest"] < SLACK_ACK_SECONDS, summary
    assert slack_flood["busy"] > 0 and telegram_flood["busy"] > 0, "the bound was reached"
    assert max(slack_s, telegram_s) <= ANSWER_WITHIN_SECONDS, summary
    assert probe.failures == 0, summary
    assert probe.p99_ms() <= HEALTHZ_P99_MS or not scale.healthz_promised, summary
    assert rss <= PEAK_RSS_MB, summary
    assert stop_s <= EXIT_WITHIN_SECONDS, summary
    assert set(dropped) == {"slack", "telegram"}, summary
