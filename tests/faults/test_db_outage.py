"""The database goes away in the middle of a digest, then comes back.

`prdigest run` delivers the catch-up digests of 120 reports to 4 Slack channels (the strict
fake) from a PostgreSQL server of the test's own (tests/kits/own_postgres.py). Once part of
them is posted, the server is stopped (every connection dies) for a while, or only its
connections are killed. While it is down:
- `/readyz` answers 503 and says why;
- `/pr 7422` is acknowledged and answered "temporarily unavailable", never a stack trace;
- `POST /api/reports` answers 503 with `Retry-After`.
When it is back, the same process (never restarted) resumes by itself: every digest message
arrives once (none lost, none doubled), `/readyz` is 200 again, and a command is answered.

The same on SQLite with another connection holding the write lock for 20 s (past the 15 s busy
timeout, so writes fail rather than wait).

Sample: PostgreSQL stopped 5 s in `SLOW=1 make test` (CI); `pytest -m faults`: stopped 30 s,
connections killed, and SQLite locked 20 s.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.fakes.slack.api import FakeSlack
from tests.kits.faults import report_line
from tests.kits.own_postgres import OwnPostgres, unavailable
from tests.kits.paths import SEED
from tests.kits.proc import BotProcess, run_cli, write_json_reports
from tests.kits.slack import SIGNING_SECRET, signed_headers, slash_body

pytestmark = pytest.mark.slow
NEEDS_SERVER = pytest.mark.skipif(
    unavailable() is not None, reason=f"no PostgreSQL server of our own: {unavailable()}"
)
FULL = pytest.mark.faults

CHANNELS = [f"C0DOWN{n}" for n in range(1, 5)]
REPORTS = 120
TOKEN = "outage-ingest-token"
Delivery = Counter[tuple[str, str]]


def write_inputs(folder: Path) -> Path:
    """Reports in folder/reports, the config (every channel due at once); the config's path."""
    write_json_reports(folder / "reports", REPORTS, 30_000, "[rollout] fix: outage change {n}")
    lines = ["timezone: UTC", "locale: en", "channels:"]
    lines += [
        f"  - {{name: team{n}, platform: slack, target: {channel}, max_items: 500,"
        f" schedule: '* * * * *', locale: en}}"
        for n, channel in enumerate(CHANNELS, 1)
    ]
    config = folder / "bot.yaml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


async def expected_delivery(env: dict[str, str]) -> Delivery:
    outputs = [
        await run_cli(env, "digest", f"team{n}", "--dry-run", "--format", "slack")
        for n in range(1, len(CHANNELS) + 1)
    ]
    expected: Delivery = Counter()
    for channel, out in zip(CHANNELS, outputs, strict=True):
        expected.update((channel, json.loads(line)["text"]) for line in out.splitlines())
    return expected


def posted(fake: FakeSlack) -> Delivery:
    return Counter((m.channel, m.text or "") for m in fake.posted if m.method == "chat.postMessage")


def answers(fake: FakeSlack, key: str) -> list[str]:
    return [
        str(call.params.get("text", ""))
        for call in fake.calls("response_url")
        if call.path == f"/response/{key}"
    ]


async def command(http: httpx.AsyncClient, fake: FakeSlack, key: str) -> None:
    url = fake.response_url(key, channel=CHANNELS[0], user="U0READER")
    body = slash_body("7422", url, channel=CHANNELS[0], user="U0READER")
    response = await http.post("/slack/events", content=body, headers=signed_headers(body))
    assert response.status_code == 200, response.text


async def until(condition: object, within: float, what: str, bot: BotProcess) -> None:
    deadline = time.monotonic() + within
    while not await condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"{what}; stderr:\n{bot.stderr.decode()[-3000:]}"
        await asyncio.sleep(0.1)


async def during_the_outage(http: httpx.AsyncClient, fake: FakeSlack, bot: BotProcess) -> None:
    """What a user and an operator see while the database is down (a SQLite write waits out
    the 15 s busy timeout before it fails: the command and the ingest call go out together)."""

    async def not_ready() -> bool:
        return (await http.get("/readyz")).status_code == 503

    await until(not_ready, 15, "/readyz never said 503", bot)
    ready = await http.get("/readyz")
    assert ready.json()["error"].startswith("store "), ready.text
    await command(http, fake, "RDOWN")
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "text/markdown"}
    ingest = asyncio.create_task(
        http.post("/api/reports", content=SEED.read_bytes(), headers=headers)
    )

    async def told_unavailable() -> bool:
        return any("temporarily unavailable" in text for text in answers(fake, "RDOWN"))

    await until(told_unavailable, 25, "the command was not answered 'unavailable'", bot)
    assert not any("Traceback" in text for text in answers(fake, "RDOWN"))
    answer = await ingest
    assert answer.status_code == 503, answer.text
    assert int(answer.headers["Retry-After"]) > 0


class Outage:
    """A store, and a way to take it away for a while."""

    def __init__(self, kind: str, seconds: float, folder: Path) -> None:
        self.kind = kind
        self.seconds = seconds
        self.pg = OwnPostgres() if kind != "locked" else None
        self.sqlite = folder / "bot.db"

    @property
    def url(self) -> str:
        return self.pg.url if self.pg is not None else f"sqlite:///{self.sqlite}"

    async def open(self) -> None:
        if self.pg is not None:
            self.pg.init()
            await self.pg.start()
            await self.pg.create_database()

    async def close(self) -> None:
        if self.pg is not None:
            await self.pg.cleanup()

    async def happen(self, http: httpx.AsyncClient, fake: FakeSlack, bot: BotProcess) -> None:
        """The outage, and what is checked while it lasts; returns when it is over."""
        started = time.monotonic()
        if self.pg is not None and self.kind == "killed":
            await self.pg.kill_connections()
            return
        if self.pg is not None:
            await self.pg.stop("fast")
        else:
            lock = sqlite3.connect(self.sqlite, isolation_level=None, timeout=5)
            lock.execute("BEGIN IMMEDIATE")
        try:
            await during_the_outage(http, fake, bot)
            await asyncio.sleep(max(0.0, self.seconds - (time.monotonic() - started)))
        finally:
            if self.pg is not None:
                await self.pg.start()
            else:
                lock.execute("ROLLBACK")
                lock.close()


async def outage_run(outage: Outage, env: dict[str, str]) -> dict[str, object]:
    try:
        await outage.open()
        env = {**env, "BOT_DATABASE_URL": outage.url}
        await run_cli(env, "ingest", "-q", str(Path(env["BOT_CONFIG"]).parent / "reports"))
        expected = await expected_delivery({**env, "SLACK_BOT_TOKEN": "xoxb-dry-run"})
        async with FakeSlack() as fake:
            for channel in CHANNELS:
                fake.add_channel(channel)
            bot_env = {
                **env,
                "SLACK_BOT_TOKEN": fake.bot_token,
                "SLACK_SIGNING_SECRET": SIGNING_SECRET,
                "SLACK_API_URL": fake.api_url,
                "BOT_INGEST_TOKEN": TOKEN,
            }
            bot = BotProcess(bot_env)
            await bot.start()
            try:
                figures = await _outage(outage, fake, bot, expected)
            except BaseException:
                await bot.kill()
                raise
            code = await bot.terminate(timeout=30)
            assert code == 0, bot.stderr.decode()[-3000:]
            final = posted(fake)
    finally:
        await outage.close()
    lost = sum((expected - final).values())
    doubled = sum((final - expected).values())
    assert (lost, doubled) == (0, 0), f"lost {lost}, doubled {doubled}"
    return {**figures, "messages": sum(expected.values()), "lost": lost, "duplicates": doubled}


async def _outage(
    outage: Outage, fake: FakeSlack, bot: BotProcess, expected: Delivery
) -> dict[str, object]:
    await bot.wait_ready(timeout=60)
    total = sum(expected.values())
    async with httpx.AsyncClient(base_url=bot.url, timeout=30) as http:

        async def some_posted() -> bool:
            return len(fake.posted) >= total // 3

        await until(some_posted, 60, "the digests did not start", bot)
        at_outage = len(fake.posted)
        await outage.happen(http, fake, bot)
        back = time.monotonic()

        async def delivered() -> bool:
            return set(expected) <= set(posted(fake))

        await until(delivered, 120, "the digests did not resume after the outage", bot)
        resumed = time.monotonic() - back

        async def ready() -> bool:
            return (await http.get("/readyz")).status_code == 200

        await until(ready, 30, "/readyz did not heal", bot)
        await command(http, fake, "RBACK")

        async def answered() -> bool:
            return any("7422" in text for text in answers(fake, "RBACK"))

        await until(answered, 30, "a command after the outage was not answered", bot)
    return {"posted_before": at_outage, "resumed_s": round(resumed, 1)}


@pytest.mark.parametrize(
    ("kind", "seconds"),
    [
        pytest.param("stopped", 5.0, id="postgresql-stopped-5s", marks=NEEDS_SERVER),
        pytest.param("stopped", 30.0, id="postgresql-stopped-30s", marks=[NEEDS_SERVER, FULL]),
        pytest.param("killed", 0.0, id="postgresql-connections-killed", marks=[NEEDS_SERVER, FULL]),
        pytest.param("locked", 20.0, id="sqlite-locked-20s", marks=FULL),
    ],
)
async def test_the_database_going_away_mid_digest_loses_and_doubles_nothing(
    kind: str, seconds: float, subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    config = write_inputs(tmp_path)
    env = {**subprocess_env, "BOT_CONFIG": str(config)}
    figures = await outage_run(Outage(kind, seconds, tmp_path), env)
    print(report_line("database outage", outage=kind, seconds=seconds, **figures))
