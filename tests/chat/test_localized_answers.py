"""Chat answers are localized through and through (issue 15): `/pr help` in a zh channel is
Chinese, descriptions included; Telegram's command menu is registered in English and Chinese;
Slack's hints name Slack's syntax (`/pr subscribe QUERY`) and Slack's words (channel, 频道)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.chat.commands import COMMAND_MENU
from bot.core.render.labels import zh_command
from tests.fakes.telegram.api import FakeTelegram
from tests.kits.slack import ADMIN, USER, SlackBot, bot_config, slack_bot
from tests.kits.telegram import TelegramBot, fast_fake

ZH_CHANNEL = "C0TEST2"


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    config = bot_config(
        channels=[{"name": "zh-team", "platform": "slack", "target": ZH_CHANNEL, "locale": "zh"}]
    )
    async with slack_bot(tmp_path, config) as running:
        running.fake.add_user(ADMIN, name="root")
        yield running


async def _text(bot: SlackBot, command: str, **where: str) -> str:
    [answer] = await bot.command(command, **where)
    assert answer.text is not None
    return answer.text


def test_every_menu_command_has_chinese_words() -> None:
    for entry in COMMAND_MENU:
        _, description = zh_command(entry.name)  # KeyError when one has none
        assert description, entry.name


async def test_help_in_a_zh_channel_is_chinese_with_slack_syntax(bot: SlackBot) -> None:
    text = await _text(bot, "help", channel=ZH_CHANNEL)
    lines = text.split("\n")
    assert lines[:3] == [
        "命令：",
        "/pr 编号 [章节] — 查看 PR 报告：摘要、风险、文件…",
        "/pr find 查询 — 查找报告：关键词、tag:、risk:、file:、impact:…",
    ]
    subscribe = (
        "/pr subscribe 查询 [at 频率] | test 查询 [at 频率] — "
        "添加一个查询的摘要订阅；test：回放查询最近 30 天的结果"
    )
    assert subscribe in lines
    assert "/pr unsubscribe 编号…|all — 按编号取消订阅，或全部取消" in lines
    assert "Show a PR" not in text


async def test_slack_hints_name_slacks_syntax_and_words(bot: SlackBot) -> None:
    # No modal here (the kit's trigger_id is not one Slack issued): the typed form instead.
    assert await _text(bot, "subscribe", user=ADMIN) == (
        "Usage: /pr subscribe QUERY [at CADENCE], e.g. /pr subscribe tag:breaking at now"
    )
    assert await _text(bot, "unsubscribe all", user=ADMIN) == (
        "This channel has no subscription yet: send /pr subscribe QUERY [at CADENCE], "
        "e.g. /pr subscribe tag:rollout at daily 09:00."
    )
    assert await _text(bot, "subscribe rollout", user=USER, channel=ZH_CHANNEL) == (
        "只有本频道管理员可以修改订阅。"
    )
    assert await _text(bot, "subscribe", user=ADMIN, channel=ZH_CHANNEL) == (
        "用法：/pr subscribe 查询 [at 频率]，例如 /pr subscribe tag:breaking at now"
    )
    assert await _text(bot, "unsubscribe 3", user=ADMIN, channel=ZH_CHANNEL) == (
        "这里没有编号为 3 的订阅。发送 /pr subscriptions 查看。"
    )
    assert await _text(bot, "nonsense-verb 1", user=ADMIN) == (
        "Cannot read nonsense-verb as a PR: write 7422, verl#7422, owner/repo#7422 or a PR link."
    )


async def test_telegram_registers_its_menu_in_english_and_chinese(tmp_path: Path) -> None:
    fake: FakeTelegram
    async with fast_fake() as fake, TelegramBot.running(fake, tmp_path):
        menus = {json.loads(key)[1]: value for key, value in fake.state.commands.items()}
    assert set(menus) == {"", "zh"}
    english = {c["command"]: c["description"] for c in menus[""]}
    chinese = {c["command"]: c["description"] for c in menus["zh"]}
    assert list(english) == list(chinese) == [entry.name for entry in COMMAND_MENU]
    assert english["pr"] == "Show a PR's report: summary, risks, files…"
    assert chinese["pr"] == "查看 PR 报告：摘要、风险、文件…"
    assert chinese["subscribe"] == "添加一个查询的摘要订阅；test：回放查询最近 30 天的结果"
    assert chinese["unsubscribe"] == "按编号取消订阅，或全部取消"
