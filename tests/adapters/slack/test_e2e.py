"""`prdigest run` as a real process against the fake Slack: what a team sees end to end.

The bot reads a config file with a Slack channel and `slack.admins`, ingests reports from a
source directory at start, serves `POST /slack/events`, and delivers the catch-up digest (the
channel's cron fired at midnight UTC, before the process started) through the outbox.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.core.reports.parse.parser import parse_file
from tests.fakes.slack.api import FakeSlack, Fault, PostedMessage
from tests.kits.paths import SEED
from tests.kits.proc import BotProcess
from tests.kits.slack import (
    ADMIN,
    CHANNEL,
    FLAGS,
    FORM,
    SIGNING_SECRET,
    USER,
    action_body,
    all_text,
    buttons_of,
    channel_posts,
    event_body,
    mention_event,
    signed_headers,
    slash_body,
    wait_for,
)
from tests.kits.waiting import until

pytestmark = pytest.mark.slow

DIGEST_CHANNEL = "C0TEST3"
EXTRA_REPORTS = 40  # enough entries that the digest must split (2 blocks each, 45 per message)


def _write_reports(folder: Path, extra: int) -> None:
    folder.mkdir()
    (folder / SEED.name).write_bytes(SEED.read_bytes())
    base = json.loads(parse_file(SEED).report.model_dump_json())
    for n in range(1, extra + 1):
        number = 10_000 + n
        report = {
            **base,
            "number": number,
            "title": f"[rollout] fix: change {n}",
            "url": f"https://github.com/verl-project/verl/pull/{number}",
        }
        (folder / f"r{n}.json").write_text(json.dumps(report, ensure_ascii=False))


def _write_config(path: Path, reports: Path) -> None:
    config = {
        "timezone": "UTC",
        "locale": "en",
        "sources": [{"dir": str(reports)}],
        "slack": {"admins": [ADMIN]},
        "channels": [
            {
                "name": "team",
                "platform": "slack",
                "target": DIGEST_CHANNEL,
                "schedule": "0 0 * * *",
                "max_items": 100,
                "locale": "en",
            }
        ],
    }
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML


@asynccontextmanager
async def running_bot(
    subprocess_env: dict[str, str], tmp_path: Path, fake: FakeSlack, extra_reports: int = 0
) -> AsyncIterator[BotProcess]:
    reports, config = tmp_path / "reports", tmp_path / "bot.yaml"
    _write_reports(reports, extra_reports)
    _write_config(config, reports)
    env = {
        **subprocess_env,
        "BOT_CONFIG": str(config),
        "SLACK_BOT_TOKEN": fake.bot_token,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": fake.api_url,
        "PYTHONUNBUFFERED": "1",
    }
    bot = BotProcess(env)
    await bot.start()
    try:
        await bot.wait_ready()
        yield bot
    finally:
        code = await bot.terminate()
        assert code == 0, bot.stderr.decode()[-3000:]


async def _post(bot: BotProcess, body: bytes, content_type: str) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        headers = signed_headers(body, content_type=content_type)
        return await client.post(f"{bot.url}/slack/events", content=body, headers=headers)


def _answers(fake: FakeSlack, key: str) -> list[PostedMessage]:
    calls = [c for c in fake.calls("response_url") if c.path == f"/response/{key}" and c.ok]
    stamps = {str(c.response["ts"]) for c in calls if c.response}
    return [m for m in fake.posted if m.method == "response_url" and m.ts in stamps]


def _log_events(bot: BotProcess, event: str) -> list[dict[str, Any]]:
    lines = bot.stderr.decode(errors="replace").splitlines()
    return [json.loads(line) for line in lines if f'"event": "{event}"' in line]


async def test_commands_mentions_and_admin_rules_work_against_slack(
    subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    async with FakeSlack() as fake, running_bot(subprocess_env, tmp_path, fake) as bot:
        url = fake.response_url("RRISKS", channel=CHANNEL, user=USER)
        started = time.monotonic()
        response = await _post(bot, slash_body("7422 risks", url), FORM)
        assert response.status_code == 200
        assert time.monotonic() - started < 3.0, "Slack wants the ack within 3 s"
        [risks] = await wait_for(lambda: _answers(fake, "RRISKS"), timeout=10)
        assert risks.response_type == "ephemeral"
        assert all(flag in all_text(risks) for flag in FLAGS)

        mention = mention_event("#7422 的风险", ts="1700000999.000100")
        response = await _post(bot, event_body(mention, "Ev0E2E1"), "application/json")
        assert response.status_code == 200
        [reply] = await wait_for(lambda: channel_posts(fake, CHANNEL), timeout=10)
        assert reply.thread_ts == "1700000999.000100"
        assert FLAGS[0] in all_text(reply)

        url = fake.response_url("RSUB", channel=CHANNEL, user=USER)
        body = slash_body("subscribe rollout", url)
        assert (await _post(bot, body, FORM)).status_code == 200
        [refused] = await wait_for(lambda: _answers(fake, "RSUB"), timeout=10)
        assert "Only admins" in all_text(refused)
        assert len(channel_posts(fake, CHANNEL)) == 1, "no subscription was announced"
    assert fake.violations == []


def _refs(messages: list[PostedMessage]) -> list[str]:
    return [b["value"] for m in messages for b in buttons_of(m) if b["action_id"] == "pr_risks"]


async def _digest_posts(bot: BotProcess, fake: FakeSlack, timeout: float) -> list[PostedMessage]:
    planned = await until(
        lambda: _log_events(bot, "digest.planned"), timeout, lambda: bot.stderr.decode()[-3000:]
    )
    expected = planned[0]["messages"]
    assert expected >= 2, "the digest should need more than one message"
    await wait_for(lambda: channel_posts(fake, DIGEST_CHANNEL), expected, timeout)
    await asyncio.sleep(1.5)  # a duplicate would arrive within the pacing interval
    return channel_posts(fake, DIGEST_CHANNEL)


async def test_the_scheduled_digest_arrives_once_split_with_working_buttons(
    subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    async with (
        FakeSlack() as fake,
        running_bot(subprocess_env, tmp_path, fake, EXTRA_REPORTS) as bot,
    ):
        posts = await _digest_posts(bot, fake, timeout=30)
        assert len(posts) == _log_events(bot, "digest.planned")[0]["messages"]
        assert all(len(m.blocks or []) <= 45 for m in posts)
        refs = _refs(posts)
        assert sorted(refs) == sorted(
            ["verl-project/verl#7422"] + [f"verl-project/verl#{10_000 + n}" for n in range(1, 41)]
        ), "every PR once, none twice"
        assert fake.rate_violations[DIGEST_CHANNEL] == 0, "1 message per second per channel"

        last = posts[-1]
        [risks_button] = [b for b in buttons_of(last) if b["action_id"] == "pr_risks"][:1]
        url = fake.response_url("RBTN", channel=DIGEST_CHANNEL, user=USER)
        body = action_body(risks_button, last, url)
        assert (await _post(bot, body, FORM)).status_code == 200
        [answer] = await wait_for(lambda: _answers(fake, "RBTN"), timeout=10)
        assert answer.response_type == "ephemeral"
        assert all(flag in all_text(answer) for flag in FLAGS)
        assert risks_button["value"].split("#")[1] in all_text(answer)
    assert fake.violations == []


async def test_a_retry_after_storm_delays_the_digest_but_loses_nothing(
    subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    storm = [Fault.rate_limited(retry_after="2") for _ in range(4)]
    async with FakeSlack() as fake:
        fake.script("chat.postMessage", *storm, channel=DIGEST_CHANNEL)
        async with running_bot(subprocess_env, tmp_path, fake, EXTRA_REPORTS) as bot:
            posts = await _digest_posts(bot, fake, timeout=45)
            assert fake.pending_faults() == 0
            refs = _refs(posts)
            assert len(refs) == len(set(refs)) == EXTRA_REPORTS + 1
            first_try = fake.calls("chat.postMessage")[0].time
            assert posts[0].time - first_try >= 4 * 2 - 0.5, "each 429 waited its Retry-After"
            assert len(_log_events(bot, "message.retry_after")) == 4
