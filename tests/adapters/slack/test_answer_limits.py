"""How much a Slack answer may be, and what a user hears while the database is out.

Every interactive answer is at most MAX_ANSWER_MESSAGES messages: a huge report asked for by a
mention (posted publicly in the thread) or by `/pr N full` shows its first messages, then one
line with the report's link and the digest's 📄 Full report button (never a command to run on
the bot's host). During a database outage
`/pr` says the bot is temporarily unavailable instead of saying nothing.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.adapters import answering
from bot.adapters.answering import MAX_ANSWER_MESSAGES
from bot.chat.answers import render_reply
from bot.core.models import Locale
from bot.core.render.labels import notice_text
from bot.core.render.limits.slack import SLACK_RESPONSE_URL_USES
from tests.kits.answers import HUGE_NUMBER, break_store, huge_report
from tests.kits.slack import (
    CHANNEL,
    SlackBot,
    all_text,
    channel_posts,
    slack_bot,
    slash_body,
    wait_for,
)

HUGE_URL = f"https://github.com/verl-project/verl/pull/{HUGE_NUMBER}"


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with slack_bot(tmp_path) as running:
        await running.service.ctx.reports.upsert(huge_report(), source="test")
        yield running


def test_the_answer_cap_fits_in_slacks_five_response_url_posts() -> None:
    assert MAX_ANSWER_MESSAGES <= SLACK_RESPONSE_URL_USES


def _points_to_the_full_report(text: str) -> None:
    assert HUGE_URL in text, text
    assert "📄" in text and "prdigest" not in text, text


async def test_a_mention_of_a_huge_report_posts_a_few_messages_then_where_the_rest_is(
    bot: SlackBot,
) -> None:
    response = await bot.mention(f"{HUGE_NUMBER} full", ts="1700000000.000200", event_id="Ev9")
    assert response.status_code == 200
    posts = await wait_for(lambda: channel_posts(bot.fake, CHANNEL), MAX_ANSWER_MESSAGES)
    adapter = bot.service.adapters[0]
    await adapter.stop()  # answers in flight finish: nothing more is posted
    posts = channel_posts(bot.fake, CHANNEL)
    assert len(posts) == MAX_ANSWER_MESSAGES
    assert all(m.thread_ts == "1700000000.000200" for m in posts)
    _points_to_the_full_report(all_text(posts[-1]))


async def test_a_slash_command_for_a_huge_report_ends_with_where_the_rest_is(
    bot: SlackBot,
) -> None:
    key, url = bot.response_url()
    assert (await bot.post(slash_body(f"{HUGE_NUMBER} full", url))).status_code == 200
    await wait_for(lambda: bot.answers(key), MAX_ANSWER_MESSAGES)
    await bot.service.adapters[0].stop()  # answers in flight finish: nothing more is posted
    answers = bot.answers(key)
    assert len(answers) == MAX_ANSWER_MESSAGES
    _points_to_the_full_report(all_text(answers[-1]))


async def test_a_huge_report_is_rendered_off_the_event_loop(
    bot: SlackBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[bool] = []
    render = render_reply

    def spy(*args: Any) -> Any:
        threads.append(threading.current_thread() is threading.main_thread())
        return render(*args)

    monkeypatch.setattr(answering, "render_reply", spy)
    await bot.command(f"{HUGE_NUMBER} risks")
    assert threads == [False]


async def test_during_a_database_outage_pr_says_the_bot_is_unavailable(
    bot: SlackBot, tmp_path: Path
) -> None:
    await break_store(bot.service.ctx.engine, tmp_path / "bot.db")
    [answer] = await bot.command("7422")
    assert answer.text == notice_text("unavailable", Locale.EN, {})


async def test_a_store_failing_after_the_replay_check_still_gets_an_answer(
    bot: SlackBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tag_counts = bot.service.answerer.reports.tag_counts

    async def store_gone(*args: Any) -> Any:
        await break_store(bot.service.ctx.engine, tmp_path / "bot.db")
        return await tag_counts(*args)

    monkeypatch.setattr(bot.service.answerer.reports, "tag_counts", store_gone)
    [answer] = await bot.command("tags")
    assert answer.text == notice_text("unavailable", Locale.EN, {})
