"""The database goes away in the middle of a digest, then comes back.

`prdigest run` delivers the catch-up digests of 40 reports to 4 Slack channels (the strict
fake) from a PostgreSQL server of the test's own (tests/kits/own_postgres.py). Once part of
them is posted, the server is stopped (every connection dies) for a while, or only its
connections are killed. While it is down:
- `/readyz` answers 503 and says why;
- `/pr 7422` is acknowledged and answered "temporarily unavailable", never a stack trace;
- `POST /api/reports` answers 503 with `Retry-After`.
When it is back, the same process (never restarted) resumes by itself: every digest message
arrives once (none lost, none doubled), `/readyz` is 200 again, and a command is answered.

Sample: the server stopped 5 s in `make test`; `pytest -m faults`: 30 s, and connections killed.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from bot.core.reports.parser import parse_file
from tests.fakes.slack.api import FakeSlack
from tests.kits.faults import report_line, run_cli
from tests.kits.own_postgres import OwnPostgres, unavailable
from tests.kits.paths import SEED
from tests.kits.proc import BotProcess
from tests.kits.slack import SIGNING_SECRET, signed_headers, slash_body

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        unavailable() is not None, reason=f"no PostgreSQL of our own: {unavailable()}"
    ),
]

CHANNELS = [f"C0DOWN{n}" for n in range(1, 5)]
REPORTS = 40
TOKEN = "outage-ingest-token"
Delivery = Counter[tuple[str, str]]


def write_inputs(folder: Path) -> Path:
    """Reports in folder/reports, the config (every channel due at once); the config's path."""
    reports = folder / "reports"
    reports.mkdir(parents=True)
    base = json.loads(parse_file(SEED).report.model_dump_json())
    for n in range(1, REPORTS + 1):
        report = {**base, "number": 30_000 + n, "title": f"[rollout] fix: outage change {n}"}
        (reports / f"r{n}.json").write_text(json.dumps(report, ensure_ascii=False))
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
    """What a user and an operator see while the database is down."""

    async def not_ready() -> bool:
        return (await http.get("/readyz")).status_code == 503

    await until(not_ready, 15, "/readyz never said 503", bot)
    ready = await http.get("/readyz")
    assert "store" in ready.json()["error"], ready.text
    await command(http, fake, "RDOWN")

    async def told_unavailable() -> bool:
        return any("temporarily unavailable" in text for text in answers(fake, "RDOWN"))

    await until(told_unavailable, 25, "the command was not answered 'unavailable'", bot)
    assert not any("Traceback" in text for text in answers(fake, "RDOWN"))
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "text/markdown"}
    ingest = await http.post("/api/reports", content=SEED.read_bytes(), headers=headers)
    assert ingest.status_code == 503, ingest.text
    assert int(ingest.headers["Retry-After"]) > 0


async def outage_run(outage: str, seconds: float, env: dict[str, str]) -> dict[str, object]:
    pg = OwnPostgres()
    try:
        pg.init()
        await pg.start()
        await pg.create_database()
        env = {**env, "BOT_DATABASE_URL": pg.url}
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
                figures = await _outage(pg, fake, bot, outage, seconds, expected)
            except BaseException:
                await bot.kill()
                raise
            code = await bot.terminate(timeout=30)
            assert code == 0, bot.stderr.decode()[-3000:]
            final = posted(fake)
    finally:
        await pg.cleanup()
    lost = sum((expected - final).values())
    doubled = sum((final - expected).values())
    assert (lost, doubled) == (0, 0), f"lost {lost}, doubled {doubled}"
    return {**figures, "messages": sum(expected.values()), "lost": lost, "duplicates": doubled}


async def _outage(
    pg: OwnPostgres,
    fake: FakeSlack,
    bot: BotProcess,
    outage: str,
    seconds: float,
    expected: Delivery,
) -> dict[str, object]:
    await bot.wait_ready(timeout=60)
    total = sum(expected.values())
    async with httpx.AsyncClient(base_url=bot.url, timeout=30) as http:

        async def some_posted() -> bool:
            return len(fake.posted) >= total // 3

        await until(some_posted, 60, "the digests did not start", bot)
        at_outage = len(fake.posted)
        started = time.monotonic()
        if outage == "stopped":
            await pg.stop("fast")
            await during_the_outage(http, fake, bot)
            await asyncio.sleep(max(0.0, seconds - (time.monotonic() - started)))
            await pg.start()
        else:
            await pg.kill_connections()
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
    ("outage", "seconds"),
    [
        pytest.param("stopped", 5.0, id="stopped-5s"),
        pytest.param("stopped", 30.0, id="stopped-30s", marks=pytest.mark.faults),
        pytest.param("killed", 0.0, id="connections-killed", marks=pytest.mark.faults),
    ],
)
async def test_postgresql_going_away_mid_digest_loses_and_doubles_nothing(
    outage: str, seconds: float, subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    config = write_inputs(tmp_path)
    env = {**subprocess_env, "BOT_CONFIG": str(config)}
    figures = await outage_run(outage, seconds, env)
    print(report_line("postgres_outage", outage=outage, seconds=seconds, **figures))
