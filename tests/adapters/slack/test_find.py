"""Issue 16 in Slack: `/pr find QUERY` (`/pr search` its alias) and "@prdigest find risk:FP8"
answer from the stored reports, one line per PR, its ref linked to the PR on GitHub and under
it the digest's Full report and ✅ Read buttons (which answer as they do in a digest); "+N
more" suggests only a query that really narrows; a query error is answered with its line; a
zh channel reads Chinese words around the report text."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.core.render.actions import ENTRY_ACTION_PREFIX
from bot.core.reports.model import ImpactLevel, Report
from bot.core.store.sql.tables import reading_marks
from tests.fakes.slack.api import PostedMessage
from tests.kits.slack import (
    CHANNEL,
    SlackBot,
    action_body,
    all_text,
    bot_config,
    channel_posts,
    shown_action,
    slack_bot,
)
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


def _actions(message: PostedMessage) -> list[list[dict[str, str]]]:
    """The buttons under each result: one actions block per result."""
    return [block["elements"] for block in message.blocks or [] if block["type"] == "actions"]


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


async def _copies(bot: SlackBot, low: int = 0) -> None:
    """Twelve more copies of the seed (impact medium), the first `low` of them low impact."""
    seed = (await bot.service.ctx.reports.find(7422))[0].report
    copies: list[tuple[Report, str]] = [
        (seed.model_copy(update={"number": n, "impact_level": ImpactLevel.MEDIUM}), "test")
        for n in range(1, 13)
    ]
    for n in range(low):
        report = copies[n][0].model_copy(update={"impact_level": ImpactLevel.LOW})
        copies[n] = (report, "test")
    await bot.service.ctx.reports.upsert_many(copies)


async def test_past_the_limit_more_and_a_narrower_query(bot: SlackBot) -> None:
    await _copies(bot, low=4)
    text = all_text(_only(await bot.command("find rollout")))
    assert "Reports matching rollout (13):" in text
    assert "+3 more. Add terms to narrow it, e.g. /pr find rollout impact&gt;=medium" in text
    narrowed = _only(await bot.command("find rollout impact>=medium"))
    assert "Reports matching rollout impact&gt;=medium:" in all_text(narrowed)
    assert len(_actions(narrowed)) == 9, "it really narrows: nine of thirteen, all shown"


async def test_more_suggests_no_query_when_no_term_narrows(bot: SlackBot) -> None:
    await _copies(bot)  # all thirteen medium impact, all stored just now
    text = all_text(_only(await bot.command("find rollout")))
    assert "+3 more. Add terms to narrow it." in text
    assert "e.g." not in text, "impact>=medium or since:30d would find the same thirteen"


async def test_each_result_is_linked_with_full_report_and_read_buttons(bot: SlackBot) -> None:
    await _copies(bot)
    answer = _only(await bot.command("find rollout"))
    blocks = answer.blocks or []
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    linked = [t for t in sections if "<https://github.com/verl-project/verl/pull/" in t]
    assert len(linked) == 10, sections
    rows = _actions(answer)
    assert len(rows) == 10 and all(len(row) == 2 for row in rows)
    for row in rows:
        report, read = row
        ref = report["value"].removeprefix("report:")
        assert (report["action_id"], read["action_id"]) == (
            f"{ENTRY_ACTION_PREFIX}report",
            f"{ENTRY_ACTION_PREFIX}read",
        )
        assert read["value"] == f"read:{ref}" and ref.startswith("verl-project/verl#")
        assert f"<https://github.com/verl-project/verl/pull/{ref.partition('#')[2]}|{ref}>" in (
            "\n".join(sections)
        )


async def test_read_under_a_result_marks_the_pr_read_where_digests_go(bot: SlackBot) -> None:
    await bot.service.subscriptions.sync_config(bot.service.ctx.config)
    answer = _only(await bot.command("find 权重 impact>=medium", channel=ZH_CHANNEL))
    button = shown_action(answer, "read:verl-project/verl#7422")
    key, url = bot.response_url(channel=ZH_CHANNEL)
    response = await bot.post(action_body(button, answer, url))
    assert response.status_code == 200
    [told] = await slack_wait(lambda: bot.answers(key) + channel_posts(bot.fake, ZH_CHANNEL))
    assert "verl-project/verl#7422" in all_text(told) and "alice" in all_text(told)
    async with bot.service.ctx.engine.connect() as conn:
        rows = await conn.execute(select(reading_marks.c.kind, reading_marks.c.subject))
        assert [(str(r.kind), str(r.subject)) for r in rows] == [("read", "verl-project/verl#7422")]


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
