"""`prdigest digest CHANNEL --dry-run` shows what `prdigest digest CHANNEL` then delivers:
the same messages, payload for payload, on the strict fakes, in every layout of each
platform, after a `now` route in the same chat has already posted one of its PRs."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from bot.cli import build_parser
from bot.core.store.sql.db import create_engine
from bot.core.store.sql.tables import digest_runs, outbox, subscriptions
from tests.fakes.slack.api import FakeSlack
from tests.fakes.telegram.api import FakeTelegram
from tests.kits.paths import ROOT

TELEGRAM_TOKEN = "123456:TEST-token"
SLACK_CHANNEL = "C0PREVIEW"
TELEGRAM_CHAT = -1001234567890
# What the sender adds to say where a message goes; the rest is the preview's payload.
ADDRESSING = {"channel", "chat_id", "thread_ts", "reply_parameters", "message_thread_id"}
SLOW = pytest.mark.slow  # Telegram paces a group's messages: these take 10 s and more
CASES = [
    ("slack", "flat"),
    pytest.param("slack", "threaded", marks=SLOW),
    ("telegram", "flat"),
    pytest.param("telegram", "threaded", marks=SLOW),
    pytest.param("telegram", "topics", marks=SLOW),
]


def _config(path: Path, platform: str, target: str, layout: str) -> None:
    """A daily (all six samples fit) and a `now` route for breaking changes, in one chat."""
    place = f"platform: {platform}, target: '{target}', locale: zh"
    path.write_text(
        "channels:\n"
        f"  - {{name: daily, {place}, layout: {layout}, schedule: '0 9 * * *', "
        "max_items: 6}\n"
        f"  - {{name: urgent, {place}, schedule: now, query: 'rollout'}}\n",
        encoding="utf-8",
    )


async def _cli(*argv: str) -> tuple[int, str]:
    args = build_parser().parse_args(list(argv))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = int(await args.handler(args))
    return status, out.getvalue()


async def _stored_counts(url: str) -> tuple[int, int, int]:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            counts = [
                (await conn.execute(select(func.count()).select_from(table))).scalar_one()
                for table in (subscriptions, digest_runs, outbox)
            ]
    finally:
        await engine.dispose()
    return counts[0], counts[1], counts[2]


@contextlib.contextmanager
def _env(monkeypatch: pytest.MonkeyPatch, **values: str) -> Iterator[None]:
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    yield


def _sent(platform: str, slack: FakeSlack, telegram: FakeTelegram) -> list[dict[str, Any]]:
    """Every message the fake accepted, in order, as the sender posted it."""
    if platform == "slack":
        return [call.params for call in slack.calls("chat.postMessage")]
    return [dict(call.params) for call in telegram.calls("sendMessage") if call.status == 200]


@pytest.mark.parametrize(("platform", "layout"), CASES)
async def test_the_preview_is_what_delivery_sends(
    platform: str, layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "bot.yaml"
    target = SLACK_CHANNEL if platform == "slack" else str(TELEGRAM_CHAT)
    _config(config, platform, target, layout)
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    async with FakeSlack() as slack, FakeTelegram(token=TELEGRAM_TOKEN) as telegram:
        slack.add_channel(SLACK_CHANNEL)
        telegram.add_chat(TELEGRAM_CHAT, "supergroup", "RL team", is_forum=layout == "topics")
        telegram.set_member(TELEGRAM_CHAT, telegram.bot_id, "administrator")
        with _env(
            monkeypatch,
            BOT_CONFIG=str(config),
            BOT_DATABASE_URL=url,
            SLACK_BOT_TOKEN=slack.bot_token,
            SLACK_API_URL=slack.api_url,
            TELEGRAM_BOT_TOKEN=TELEGRAM_TOKEN,
            TELEGRAM_API_URL=telegram.url,
        ):
            assert (await _cli("ingest", "-q", str(ROOT / "examples" / "reports")))[0] == 0
            assert (await _cli("digest", "urgent"))[0] == 0  # the `now` route posts first
            posted_before = len(_sent(platform, slack, telegram))
            stored = await _stored_counts(url)
            status, out = await _cli("digest", "daily", "--dry-run", "--format", platform)
            assert status == 0
            preview = [json.loads(line) for line in out.splitlines()]
            assert await _stored_counts(url) == stored, "a dry run stores nothing"
            assert (await _cli("digest", "daily"))[0] == 0
        delivered = _sent(platform, slack, telegram)[posted_before:]
    assert preview and len(preview) == len(delivered)
    assert "已于" in json.dumps(preview, ensure_ascii=False), "the `now` post is referred to"
    for shown, sent in zip(preview, delivered, strict=True):
        assert set(shown) & ADDRESSING == set()
        assert {key: sent.get(key) for key in shown} == shown
