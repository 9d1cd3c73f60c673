"""`prdigest run` and `prdigest digest` as real processes: what a new user and an operator see."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.fakes.slack.api import FakeSlack
from tests.kits.paths import SEED
from tests.kits.proc import BotProcess, dry_run_texts, write_json_reports
from tests.kits.waiting import until, until_async

pytestmark = pytest.mark.slow

SECRETS = {
    "BOT_INGEST_TOKEN": "ingest-token-5f0c1a2b3c4d5e6f",
    "SLACK_SIGNING_SECRET": "signing-secret-8e7d6c5b4a39",
    "TELEGRAM_WEBHOOK_SECRET": "tg-webhook-secret-1234abcd",
}


async def test_the_embedded_default_prints_the_tag_view_and_stops_cleanly(
    subprocess_env: dict[str, str],
) -> None:
    bot = BotProcess(subprocess_env)
    await bot.start()
    try:
        await bot.wait_ready()
        await bot.wait_stdout("#7422", timeout=20)
        out = bot.stdout.decode()
        assert "标签视图" in out
        assert "[rollout]" in out
        sent = 'prdigest_messages_sent_total{platform="console"} 1.0'
        async with httpx.AsyncClient() as client:
            assert (await client.get(f"{bot.url}/healthz")).text == "ok"

            async def counted() -> bool:  # the digest is printed before its send is counted
                return sent in (await client.get(f"{bot.url}/metrics")).text

            await until_async(counted, 10, "the console send was never counted", every=0.1)
    finally:
        code = await bot.terminate()
    assert code == 0
    assert '"event": "service.stopped"' in bot.stderr.decode()
    assert bot.stdout.decode().count("#7422 ") == 1, "one catch-up digest, not one per tick"


async def test_logs_never_print_a_secret(subprocess_env: dict[str, str]) -> None:
    env = {**subprocess_env, **SECRETS}
    bot = BotProcess(env)
    await bot.start()
    try:
        await bot.wait_ready()
        async with httpx.AsyncClient() as client:
            for token in (SECRETS["BOT_INGEST_TOKEN"], "wrong-" + SECRETS["BOT_INGEST_TOKEN"]):
                await client.post(
                    f"{bot.url}/api/reports",
                    content=SEED.read_bytes(),
                    headers={"Authorization": f"Bearer {token}", "Content-Type": "text/markdown"},
                )
    finally:
        await bot.terminate()
    logs = bot.stdout.decode() + bot.stderr.decode()
    assert '"event": "report.ingested"' in logs
    for secret in SECRETS.values():
        assert secret not in logs


async def test_a_kill_mid_digest_loses_nothing_and_repeats_at_most_the_send_in_flight(
    subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    reports = tmp_path / "reports"
    write_json_reports(reports, 230)
    config = tmp_path / "bot.yaml"
    config.write_text(
        "channels:\n  - {name: team, platform: slack, target: C0TEST1, max_items: 500,"
        " schedule: '0 9 * * *', locale: en}\n",
        encoding="utf-8",
    )
    async with FakeSlack() as fake:
        env = {
            **subprocess_env,
            "BOT_CONFIG": str(config),
            "SLACK_BOT_TOKEN": fake.bot_token,
            "SLACK_SIGNING_SECRET": "s",
            "SLACK_API_URL": fake.api_url,
        }
        ingest = BotProcess(env, args=["ingest", "-q", str(reports)])
        await ingest.start()
        assert await ingest.wait() == 0
        expected = await dry_run_texts(env)
        assert len(expected) >= 10, f"the digest should split into ≥10 messages: {len(expected)}"
        first = BotProcess(env, args=["digest", "team"])
        await first.start()
        await until(lambda: len(fake.posted) >= 3, 60, lambda: first.stderr.decode()[-2000:])
        await first.kill()
        killed_after = len(fake.posted)
        second = BotProcess(env, args=["digest", "team"])
        await second.start()
        assert await second.wait(timeout=120) == 0, second.stderr.decode()[-2000:]
        posted = [m.text for m in fake.posted]
    assert killed_after >= 3
    for text in expected:
        assert 1 <= posted.count(text) <= 2, "each message arrives, at most one duplicate"
    duplicates = len(posted) - len(set(posted))
    assert duplicates <= 1
    assert set(posted) == set(expected)
