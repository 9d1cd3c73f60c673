"""Issue 17's `subscribe test QUERY [at CADENCE]` in the chat: what a subscription would have
posted over the last 30 days, for anyone in the chat, changing nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.chat.answers import Answerer, Chat, Notice
from bot.chat.commands import UsageError, parse, parse_pr_text
from bot.chat.requests import Subscribe, TrySubscribe
from bot.core.models import Locale, Platform
from bot.core.reports.model import Report
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from bot.settings import BotConfig
from tests.kits.delivery import FakeClock

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)  # a Monday


def _chat(locale: Locale = Locale.EN) -> Chat:
    async def is_admin() -> bool:
        return False  # an ordinary member: a replay changes nothing, so it is theirs to ask

    return Chat(Platform.TELEGRAM, "-100", "42", is_admin, locale, user_name="ada")


def test_the_query_is_read_whole_and_the_cadence_follows_the_last_at() -> None:
    request = parse("subscribe", "test tag:breaking OR risk:fp8 at weekly fri 17:00")
    assert isinstance(request, TrySubscribe) and request.cadence == "weekly fri 17:00"
    assert request.typed.text == "tag:breaking OR risk:fp8"
    slack = parse_pr_text("subscribe test 权重")
    assert isinstance(slack, TrySubscribe) and (slack.typed.text, slack.cadence) == ("权重", "")
    bad = parse("subscribe", "test rsk:x")
    assert isinstance(bad, TrySubscribe)
    assert bad.typed.error.startswith("query: unknown field 'rsk'")
    with pytest.raises(UsageError) as caught:
        parse("subscribe", "test")
    assert caught.value.key == "usage_subscribe_test"
    assert isinstance(parse("subscribe", "rollout"), Subscribe), (
        "a tag named test is still `subscribe`"
    )


async def test_a_member_replays_known_reports_and_nothing_changes(store: ReportStore) -> None:
    days_ago = [1, 2, 3, 9, 20, 40]  # the last one is outside the 30 days
    await store.upsert_many(
        [
            (
                Report(
                    repo="verl-project/verl",
                    number=100 + i,
                    title=f"[breaking] change {i}" if i % 2 == 0 else f"[fix] fix {i}",
                    tags=["breaking"] if i % 2 == 0 else ["fix"],
                    merged_at=NOW - timedelta(days=ago),
                ),
                "",
            )
            for i, ago in enumerate(days_ago)
        ]
    )
    answerer = Answerer(store, DestinationStore(store.engine), BotConfig(), clock=FakeClock(NOW))
    answer = await answerer.answer(parse("subscribe", "test tag:breaking at daily 09:00"), _chat())
    assert isinstance(answer.reply, Notice) and answer.reply.key == "replay"
    params = answer.reply.params
    # #100 (1 day ago), #102 (3), #104 (20) match; #106... is not there; 40 days is outside.
    assert (params["matched"], params["digests"], params["cadence"]) == ("3", "3", "daily 09:00")
    assert params["per_week"] == f"{3 / (30 / 7):.1f}"
    assert params["items"].splitlines() == [
        "verl-project/verl#100 [breaking] change 0",
        "verl-project/verl#102 [breaking] change 2",
        "verl-project/verl#104 [breaking] change 4",
    ]
    assert await DestinationStore(store.engine).all() == [], "a replay subscribes nobody"
    none = await answerer.answer(parse("subscribe", "test tag:nothing"), _chat(Locale.ZH))
    assert isinstance(none.reply, Notice) and none.reply.key == "replay_empty"
    assert none.reply.params["cadence"] == "0 9 * * mon-fri", "no cadence: the chat default"
    bad = await answerer.answer(parse("subscribe", "test 权重 at hourly"), _chat())
    assert isinstance(bad.reply, Notice) and bad.reply.key == "bad_cadence"
    assert bad.reply.params["error"].startswith("cadence: 'hourly' is not a cadence")
