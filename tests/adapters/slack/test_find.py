"""Issue 16 in Slack: `/pr find QUERY` (`/pr search` its alias) and "@prdigest find risk:FP8"
answer from the stored reports, one line per PR; a query error is answered with its line; a
zh channel reads Chinese words around the report text."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.core.reports.model import Report
from tests.fakes.slack.api import PostedMessage
from tests.kits.slack import CHANNEL, SlackBot, all_text, bot_config, channel_posts, slack_bot
from tests.kits.slack import wait_for as slack_wait

ZH_CHANNEL = "C0TEST2"
SEED_LINE = "verl-project/verl#7422 ★ [rollout] fix: preserve dummy load_format"


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    config = bot_config(
        channels=[{"name": "zh-team", "platform": "slack", "target": ZH_CHANNEL, "locale": "zh"}]
    )
    async with slack_bot(tmp_path, config) as running:
        yield running


def _only(messages: list[PostedMessage]) -> PostedMessage:
    assert len(messages) == 1, [m.text for m in messages]
    return messages[0]


@pytest.mark.parametrize("verb", ["find", "search"])
async def test_pr_find_and_its_alias_list_the_matching_prs(bot: SlackBot, verb: str) -> None:
    answer = _only(await bot.command(f"{verb} 权重 impact>=medium"))
    text = all_text(answer)
    assert "Reports matching 权重 impact&gt;=medium:" in text  # Slack escapes > itself
    assert SEED_LINE in text
    assert "(impact: medium)" in text
    assert answer.response_type == "ephemeral"


async def test_a_mention_finds_by_risk_flag_in_its_thread(bot: SlackBot) -> None:
    await bot.mention("find risk:FP8", ts="1700000999.000700", event_id="Ev0FIND")
    reply = _only(await slack_wait(lambda: channel_posts(bot.fake, CHANNEL)))
    assert reply.thread_ts == "1700000999.000700"
    assert "Reports matching risk:FP8:" in all_text(reply)
    assert SEED_LINE in all_text(reply)


async def test_a_zh_channel_reads_chinese_words(bot: SlackBot) -> None:
    answer = _only(await bot.command("find 权重", channel=ZH_CHANNEL))
    text = all_text(answer)
    assert "与「权重」匹配的报告：" in text
    assert "（影响：中）" in text


async def test_past_the_limit_more_and_a_narrower_query(bot: SlackBot) -> None:
    seed = (await bot.service.ctx.reports.find(7422))[0].report
    copies: list[tuple[Report, str]] = [
        (seed.model_copy(update={"number": n}), "test") for n in range(1, 13)
    ]
    await bot.service.ctx.reports.upsert_many(copies)
    text = all_text(_only(await bot.command("find rollout")))
    assert "Reports matching rollout (13):" in text
    assert "+3 more. Add terms to narrow it, e.g. /pr find rollout impact&gt;=medium" in text


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("rsk:FP8", "query: unknown field 'rsk' at 1 (did you mean risk?)"),
        ("(tag:rollout", "query:"),
    ],
)
async def test_a_query_error_is_answered_with_its_line(
    bot: SlackBot, query: str, expected: str
) -> None:
    text = all_text(_only(await bot.command(f"find {query}")))
    assert expected in text
    assert "Something went wrong" not in text


async def test_find_with_nothing_asks_for_a_query(bot: SlackBot) -> None:
    text = all_text(_only(await bot.command("find")))
    assert "Usage: /pr find QUERY" in text
