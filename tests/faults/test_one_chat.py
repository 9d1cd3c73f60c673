"""One chat's subscriptions never stop delivery for the others.

A Slack DM holds 2,000 `now` subscriptions, each a long query that matches "rollout" (made
before the caps, or imported: the caps stop a chat from making them, not a store from holding
them), and a Telegram group has its own `now` subscription. `prdigest run` serves both against
the strict fakes; a report containing "rollout" is posted to the ingest API. Then:
- the group's digest arrives on time (within ON_TIME of the report);
- the DM's digest arrives too, its "matched:" line naming three subscriptions and "+N";
- no digest failed to plan, and one more `subscribe` in the DM is refused by the cap.

Before the fix, every tick failed with `FitError` from the DM's "matched:" line and the group
got nothing. Sample: 200 subscriptions in `SLOW=1 make test` (CI); `pytest -m faults`: 2,000.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest

from bot.core.digest.select import DigestFilter
from bot.core.models import Locale, Platform
from bot.core.reports.parse.parser import parse_file
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate
from bot.core.store.subscriptions import NewSubscription, SubscriptionStore
from tests.fakes.slack.api import FakeSlack
from tests.fakes.telegram.api import FakeTelegram
from tests.kits.faults import report_line
from tests.kits.paths import SEED
from tests.kits.proc import BotProcess
from tests.kits.slack import SIGNING_SECRET, signed_headers, slash_body

pytestmark = pytest.mark.slow

DM = "D0ONECHAT"
OWNER = "U0ONECHAT"
GROUP = -1009001
TOKEN = "one-chat-ingest-token"
ON_TIME = 10.0  # seconds from the report's arrival to the group's digest (ticks every 0.5 s)
NAME_LENGTH = 100


def write_config(path: Path) -> None:
    path.write_text(
        "timezone: UTC\nlocale: en\n"
        "delivery: {tick_seconds: 0.5}\n"
        "channels:\n"
        f"  - {{name: watchers, platform: telegram, target: '{GROUP}', schedule: now,"
        " query: 'rollout'}\n",
        encoding="utf-8",
    )


async def crowded_store(db: Path, count: int) -> None:
    """The seed report stored; the DM's `count` subscriptions with long, distinct queries."""
    engine = create_engine(f"sqlite:///{db}")
    await migrate(engine)
    await ReportStore(engine).upsert(parse_file(SEED).report, source="test")
    store = SubscriptionStore(engine)
    for n in range(count):
        query = f"rollout -x{n:04d}" + "x" * (NAME_LENGTH - 15)
        new = NewSubscription(
            name=query,
            filter=DigestFilter(query=query),
            schedule="now",
            cadence="now",
            timezone="UTC",
            locale=Locale.EN,
            owner=OWNER,
            actor="test",
        )
        await store.add(Platform.SLACK, DM, new)
    await engine.dispose()


def new_report() -> bytes:
    """The seed report as another PR, merged after everything stored."""
    text = SEED.read_text(encoding="utf-8")
    return text.replace("7422", "9422").encode()


def dm_text(slack: FakeSlack) -> str:
    """Everything the DM shows: each message's text and blocks."""
    return "\n".join(
        f"{message.text} {json.dumps(message.blocks, ensure_ascii=False)}"
        for message in slack.messages_in(DM)
    )


async def until(check: object, within: float, what: str, bot: BotProcess) -> float:
    started = time.monotonic()
    while not check():  # type: ignore[operator]
        assert time.monotonic() - started < within, (
            f"{what}; stderr:\n{bot.stderr.decode()[-3000:]}"
        )
        await asyncio.sleep(0.05)
    return time.monotonic() - started


@pytest.mark.parametrize(
    "count", [pytest.param(200, id="sample-200"), pytest.param(2000, marks=pytest.mark.faults)]
)
async def test_a_crowded_dm_never_stops_another_chats_digest(
    count: int, subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    db, config = tmp_path / "bot.db", tmp_path / "bot.yaml"
    write_config(config)
    await crowded_store(db, count)
    async with FakeSlack() as slack, FakeTelegram() as telegram:
        slack.add_channel(DM)
        telegram.add_chat(GROUP, "supergroup", title="watchers")
        env = {
            **subprocess_env,
            "BOT_DATABASE_URL": f"sqlite:///{db}",
            "BOT_CONFIG": str(config),
            "BOT_INGEST_TOKEN": TOKEN,
            "SLACK_BOT_TOKEN": slack.bot_token,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SLACK_API_URL": slack.api_url,
            "TELEGRAM_BOT_TOKEN": telegram.token,
            "TELEGRAM_API_URL": telegram.url,
        }
        bot = BotProcess(env)
        await bot.start()
        try:
            await bot.wait_ready()
            async with httpx.AsyncClient(base_url=bot.url, timeout=30) as http:
                # The group is new to the store: its first digest brings the seed (7422).
                await until(lambda: telegram.sent_to(GROUP), 30, "no first digest", bot)
                headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "text/markdown"}
                posted = await http.post("/api/reports", content=new_report(), headers=headers)
                assert posted.status_code in (200, 201), posted.text
                group_s = await until(
                    lambda: any("9422" in m.text for m in telegram.sent_to(GROUP)),
                    ON_TIME,
                    "the group's digest was late",
                    bot,
                )
                dm_s = await until(lambda: "9422" in dm_text(slack), 30, "no DM digest", bot)
                url = slack.response_url("CAP", channel=DM, user=OWNER)
                body = slash_body("subscribe tag:fix", url, channel=DM, user=OWNER)
                acked = await http.post("/slack/events", content=body, headers=signed_headers(body))
                assert acked.status_code == 200, acked.text
                await until(
                    lambda: slack.calls("response_url"), 10, "subscribe was not answered", bot
                )
        finally:
            code = await bot.terminate()
    answer = str(slack.calls("response_url")[-1].params.get("text", ""))
    logs = bot.stderr.decode()
    print(
        report_line(
            "one chat's subscriptions",
            subscriptions=count,
            group_digest_s=round(group_s, 2),
            dm_digest_s=round(dm_s, 2),
            plan_failures=logs.count("digest.plan_failed"),
        )
    )
    assert code == 0, logs[-2000:]
    shown = dm_text(slack)
    assert f"+{count - 3}" in shown, shown[-1000:]
    assert "digest.plan_failed" not in logs and "FitError" not in logs
    assert "50 subscriptions here" in answer, answer
