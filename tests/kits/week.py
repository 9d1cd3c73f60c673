"""Helpers for the work-week end-to-end test (no tests here): a team's config read from YAML
as a new user writes it, the service in-process with a fake Slack and a fake Telegram behind
it, a fake clock moved in half-hour steps, and the reports a week brings.

    async with team_week(tmp_path, local(4, 18, 0)) as week:
        await week.ingest(rollout_pr())
        await week.step_to(local(7, 8, 0))   # tick, then deliver everything queued
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest.mock import patch
from zoneinfo import ZoneInfo

import httpx
from pydantic import SecretStr
from slack_sdk import signature
from sqlalchemy import select

from bot.adapters.telegram.adapter import TelegramAdapter
from bot.adapters.telegram.pace import ChatPacer
from bot.adapters.telegram.sender import TelegramSender
from bot.chat.reading import reading_policy
from bot.core.delivery.ledger import unfinished_count
from bot.core.delivery.outbox import Due, rehearse_run
from bot.core.models import Format, Origin, Platform
from bot.core.reports.model import ImpactLevel, KeyFile, RecommendationLevel, Report
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate, rehearsal_transaction
from bot.core.store.sql.tables import outbox, run_members, subscriptions
from bot.core.store.subscriptions import SubscriptionStore
from bot.scheduling.due import longer_than_a_day
from bot.service.app import Service
from bot.service.context import Context
from bot.settings import Env, load_config
from tests.fakes.slack.api import FakeSlack, PostedMessage
from tests.fakes.telegram.api import FakeTelegram, SentMessage
from tests.kits.delivery import FakeClock
from tests.kits.slack import (
    ADMIN,
    SIGNING_SECRET,
    USER,
    SlackBot,
    action_body,
    channel_posts,
    shown_action,
    signed_headers,
)
from tests.kits.telegram import MEMBER, add_group
from tests.kits.waiting import until_async

ZONE = ZoneInfo("Asia/Shanghai")
SLACK_CHANNEL = "C0TEAM"
GROUP = -1002026  # the team's Telegram group
REPO = "verl-project/verl"
ROLLOUT_FILE = "verl/workers/rollout/sglang_rollout/weight_sync.py"
# Delivery steps of fake time: a Telegram group takes a message every 3.05 s.
DRAIN_STEP_SECONDS = 4.0
DRAIN_MAX_STEPS = 400
PRESS_SETTLE_POLLS = 25  # polls with nothing more arriving before a press counts as answered

CONFIG_YAML = f"""\
timezone: Asia/Shanghai
locale: zh
slack:
  admins: [{ADMIN}]
calendar:
  timezone: Asia/Shanghai
  workdays: [mon-fri]
  quiet_hours: "22:00-08:00"
  holidays: {{country: CN}}
channels:
  - name: rl-daily
    platform: slack
    target: {SLACK_CHANNEL}
    cadence: workdays 09:00
    max_items: 3
    locale: en
  - name: rl-weekly
    platform: slack
    target: {SLACK_CHANNEL}
    cadence: weekly fri 17:00
    locale: en
  - name: rl-now
    platform: slack
    target: {SLACK_CHANNEL}
    cadence: now
    query: "file:verl/workers/rollout/**"
    locale: en
  - name: rl-breaking
    platform: slack
    target: {SLACK_CHANNEL}
    cadence: now
    tags: [breaking]
    urgent: true
    locale: en
  - name: tg-daily
    platform: telegram
    target: "{GROUP}"
    cadence: daily 09:00
    layout: threaded
    max_items: 5
"""


def local(day: int, hour: int, minute: int = 0) -> datetime:
    """A moment of December 2026 on the team's wall clock (Asia/Shanghai)."""
    return datetime(2026, 12, day, hour, minute, tzinfo=ZONE)


_numbers = itertools.count(7600)


def make_pr(
    *,
    files: tuple[str, ...] = ("verl/trainer/ppo/core_algos.py",),
    tags: tuple[str, ...] = ("trainer",),
    must_read: bool = False,
    number: int | None = None,
) -> Report:
    """A report as the review pipeline writes one: key files, tags, impact, risk flags."""
    n = number if number is not None else next(_numbers)
    level = RecommendationLevel.MUST_READ if must_read else RecommendationLevel.SKIM
    return Report(
        repo=REPO,
        number=n,
        title=f"[{tags[0]}] change {n}: adjust {files[0].rsplit('/', 1)[-1]}",
        url=f"https://github.com/{REPO}/pull/{n}",
        summary=f"PR {n} in one line",
        recommendation="值得精读。" if must_read else "可略读。",
        recommendation_level=level,
        key_files=[KeyFile(path=path, note="changed") for path in files],
        impact="中",
        impact_level=ImpactLevel.MEDIUM,
        risk_flags=[f"risk of {n}"],
        tags=list(tags),
    )


def rollout_pr(must_read: bool = True) -> Report:
    return make_pr(files=(ROLLOUT_FILE,), tags=("rollout",), must_read=must_read)


@dataclass
class Week:
    """The running service, both fakes and the fake clock."""

    clock: FakeClock
    service: Service
    slack: SlackBot
    telegram: FakeTelegram
    ingested: list[Report] = field(default_factory=list)

    async def ingest(self, report: Report) -> None:
        await self.service.ctx.reports.upsert(report, source="test")
        self.ingested.append(report)

    async def drain(self) -> None:
        """Deliver everything queued, moving fake time on as the platforms' pacing needs."""
        engine = self.service.ctx.engine
        for _ in range(DRAIN_MAX_STEPS):
            await self.service.deliverer.run_once()
            if not await unfinished_count(engine):
                return
            self.clock.advance(DRAIN_STEP_SECONDS)
        raise AssertionError(f"{await unfinished_count(engine)} message(s) never delivered")

    async def step_to(self, at: datetime) -> None:
        """The clock to `at`, one tick, and everything it queued delivered."""
        assert at >= self.clock(), f"time runs forward: {at} is before {self.clock()}"
        self.clock.now = at
        await self.service.ticker.tick()
        await self.drain()


def _env(tmp_path: Path, slack: FakeSlack, telegram: FakeTelegram) -> Env:
    return Env(
        database_url=f"sqlite:///{tmp_path / 'bot.db'}",
        slack_bot_token=SecretStr(slack.bot_token),
        slack_signing_secret=SecretStr(SIGNING_SECRET),
        slack_api_url=slack.api_url,
        telegram_bot_token=SecretStr(telegram.token),
        telegram_api_url=telegram.url,
    )


def _telegram_side(service: Service, clock: FakeClock) -> TelegramAdapter:
    """The Telegram adapter, its sender paced on the fake clock like the outbox."""
    sender = service.senders[Platform.TELEGRAM]
    assert isinstance(sender, TelegramSender)
    sender.pacer = ChatPacer(clock=lambda: clock().timestamp())
    [adapter] = [a for a in service.adapters if isinstance(a, TelegramAdapter)]
    return adapter


@asynccontextmanager
async def team_week(tmp_path: Path, start: datetime) -> AsyncIterator[Week]:
    """The team's service from `start` on, both chats set up, the Telegram side polling."""
    clock = FakeClock(start)
    stamp = lambda: clock().timestamp()  # noqa: E731 - the fakes read seconds
    config_path = tmp_path / "bot.yaml"
    config_path.write_text(CONFIG_YAML, encoding="utf-8")
    config = load_config(config_path)
    async with FakeSlack(clock=stamp) as slack, FakeTelegram(clock=stamp) as telegram:
        slack.add_channel(SLACK_CHANNEL, name="rl-team")
        slack.add_user(ADMIN, name="root")
        add_group(telegram, GROUP)
        env = _env(tmp_path, slack, telegram)
        engine = create_engine(env.database_url)
        await migrate(engine)
        service = Service(Context(env, config, engine, ReportStore(engine)), clock=clock)
        await service.subscriptions.sync_config(config)
        adapter = _telegram_side(service, clock)
        await adapter.start()
        transport = httpx.ASGITransport(app=service.web())
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://bot") as http:
                yield Week(clock, service, SlackBot(slack, service, http), telegram)
        finally:
            for each in service.adapters:
                await each.stop()
            sender = service.senders[Platform.TELEGRAM]
            assert isinstance(sender, TelegramSender)
            await sender.close()
            await engine.dispose()


async def rehearse_daily(week: Week, name: str) -> list[dict[str, Any]]:
    """What `prdigest digest NAME --dry-run --format slack` prints now, planned the way the
    CLI plans it (bot/cli/digest_cmd.py `_dry_run`) in a transaction that is rolled back."""
    service = week.service
    now = week.clock()
    async with rehearsal_transaction(service.ctx.engine) as conn:
        await service.subscriptions.sync_config_in(conn, service.ctx.config)
        found = await SubscriptionStore.named_in(conn, name)
        [dest] = [s for s in found if s.origin is Origin.CONFIG]
        due = [Due(dest, now, longer_than_a_day(dest, now))]
        reading = reading_policy(service.ctx.config)
        return await rehearse_run(
            conn, dest.destination_id, due, service.renderer, now, reading=reading, fmt=Format.SLACK
        )


async def routes_by_message(week: Week) -> dict[str, tuple[str, ...]]:
    """Each delivered message's platform id, with the subscriptions whose run posted it."""
    names = (
        select(outbox.c.external_id, subscriptions.c.name)
        .join(run_members, run_members.c.run_id == outbox.c.run_id)
        .join(subscriptions, subscriptions.c.id == run_members.c.subscription_id)
        .where(outbox.c.external_id.is_not(None))
    )
    found: dict[str, set[str]] = {}
    async with week.service.ctx.engine.connect() as conn:
        for external_id, name in await conn.execute(names):
            found.setdefault(str(external_id), set()).add(str(name))
    return {key: tuple(sorted(value)) for key, value in found.items()}


async def press_slack(week: Week, message: PostedMessage, value: str) -> list[PostedMessage]:
    """Press the button carrying `value` on a channel message through Slack's interactivity
    request; the channel posts it led to."""
    fake = week.slack.fake
    before = len(channel_posts(fake, SLACK_CHANNEL))
    _, url = week.slack.response_url(channel=SLACK_CHANNEL, user=USER)
    body = action_body(shown_action(message, value), message, url, user=USER)
    # Signed at the service's time: the adapter checks the stamp against the service clock,
    # bolt's own check against slack_sdk's wall clock, which reads the fake one meanwhile.
    now = week.clock().timestamp()
    headers = signed_headers(body, timestamp=str(int(now)))
    with patch.object(signature.Clock, "now", lambda _self: now):
        response = await week.slack.http.post("/slack/events", content=body, headers=headers)
    assert response.status_code == 200, response.text

    async def posted() -> bool:
        await week.service.deliverer.run_once()
        return len(channel_posts(fake, SLACK_CHANNEL)) > before

    await until_async(posted, timeout=10, what=f"pressing {value} posted nothing")
    await week.drain()
    return channel_posts(fake, SLACK_CHANNEL)[before:]


async def press_telegram(week: Week, message: SentMessage, data: str) -> list[SentMessage]:
    """A member presses the button carrying `data` under a group message; the messages the
    group got for it (fake time moves on meanwhile: replies keep the group's pace)."""
    fake = week.telegram
    before = len(fake.sent_to(GROUP))
    answered = len(fake.answered_callbacks)
    week.clock.advance(10)
    fake.press(GROUP, message.message_id, data, user=MEMBER)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 15
    settled = 0
    while settled < PRESS_SETTLE_POLLS:
        assert loop.time() < deadline, f"pressing {data} posted nothing"
        await asyncio.sleep(0.02)
        week.clock.advance(1)
        done = len(fake.answered_callbacks) > answered and len(fake.sent_to(GROUP)) > before
        settled = settled + 1 if done else 0
    return fake.sent_to(GROUP)[before:]


def slack_values(message: PostedMessage) -> list[str]:
    """The values of every button and overflow option the message shows."""
    found = []
    for block in message.blocks or []:
        for element in [block.get("accessory"), *block.get("elements", [])]:
            if isinstance(element, dict) and element.get("type") == "button":
                found.append(str(element.get("value", "")))
            if isinstance(element, dict) and element.get("type") == "overflow":
                found.extend(str(option["value"]) for option in element["options"])
    return found


def tg_buttons(message: SentMessage) -> list[dict[str, str]]:
    rows = (message.reply_markup or {}).get("inline_keyboard", [])
    assert isinstance(rows, list)
    return [button for row in rows for button in row]


def slack_entries(message: PostedMessage) -> list[tuple[str, str]]:
    """(PR number, the entry's text) for each entry the message shows, found by its Read
    button (in the next actions block, or the section's own accessory)."""
    blocks = message.blocks or []
    found = []
    for index, block in enumerate(blocks):
        if block.get("type") != "section":
            continue
        following = blocks[index + 1] if index + 1 < len(blocks) else {}
        elements = [block.get("accessory"), *following.get("elements", [])]
        reads = [
            str(e["value"])
            for e in elements
            if isinstance(e, dict) and str(e.get("value", "")).startswith("read:")
        ]
        if reads:
            text = str(block.get("text", {}).get("text", ""))
            lines = [line for line in text.splitlines() if not line.startswith("*[")]
            found.append((reads[0].rsplit("#", 1)[-1], "\n".join(lines)))
    return found


def is_full(entry_text: str) -> bool:
    """A full entry has its summary under the title; a compact one is one line."""
    return "\n" in entry_text.strip()
