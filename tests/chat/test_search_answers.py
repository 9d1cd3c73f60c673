"""What a chat hears when its query is refused: too many terms or a control character (the
parser), too slow (the time budget), busy (searches at once, the process's and one person's).
Never "the database cannot be reached", and a refused `subscribe` saves nothing."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.chat.answers import Answerer, Chat, Notice
from bot.chat.commands import parse
from bot.core.models import Locale, Platform
from bot.core.render.labels import notice_text
from bot.core.reports.model import Report
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import SubscriptionStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from bot.settings import BotConfig
from bot.settings.search import SearchConfig
from tests.kits.delivery import FakeClock

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SPENT = SearchConfig(timeout_seconds=1e-9)  # every query's budget is gone at once


def _chat(user: str = "42", *, private: bool = True, locale: Locale = Locale.EN) -> Chat:
    async def is_admin() -> bool:
        return True

    return Chat(Platform.TELEGRAM, user, user, is_admin, locale, user_name="ada", private=private)


def _answerer(store: ReportStore, search: SearchConfig | None = None) -> Answerer:
    config = BotConfig(search=search or SearchConfig())
    return Answerer(store, DestinationStore(store.engine), config, clock=FakeClock(NOW))


async def _notice(answerer: Answerer, verb: str, text: str, chat: Chat | None = None) -> Notice:
    answer = await answerer.answer(parse(verb, text), chat or _chat())
    assert isinstance(answer.reply, Notice)
    return answer.reply


async def _saved(store: ReportStore, chat: Chat) -> int:
    subs = await SubscriptionStore(store.engine, FakeClock(NOW)).of(chat.platform, chat.chat_id)
    return len(subs)


async def test_a_crowded_or_run_is_refused_with_the_term_cap(store: ReportStore) -> None:
    answerer = _answerer(store)
    crowded = "OR".join(f"(w{i}x)" for i in range(220))
    reply = await _notice(answerer, "find", crowded)
    assert reply.key == "bad_query"
    assert reply.params["error"].startswith("query: too many terms (220, at most 64)")


async def test_a_nul_in_a_word_is_refused_by_name(store: ReportStore) -> None:
    reply = await _notice(_answerer(store), "find", "roll\x00out")
    assert reply.key == "bad_query"
    assert reply.params["error"] == "query: control character U+0000 at 5 (a query is plain text)"


async def test_find_and_subscribe_test_past_the_budget_are_too_slow(store: ReportStore) -> None:
    await store.upsert_many([(Report(repo="a/b", number=1, title="rollout", merged_at=NOW), "")])
    answerer = _answerer(store, SPENT)
    for verb, text in (("find", "rollout"), ("subscribe", "test rollout at daily 09:00")):
        reply = await _notice(answerer, verb, text)
        assert (reply.key, reply.params) == ("query_too_slow", {"seconds": "1e-09"})
    words = notice_text("query_too_slow", Locale.EN, {"seconds": "5"})
    assert words.startswith("This query took too long (over 5 s) and was stopped; narrow it")
    assert "请缩小范围" in notice_text("query_too_slow", Locale.ZH, {"seconds": "5"})
    assert (await _notice(_answerer(store), "find", "rollout")).key == "find_results"


async def test_a_subscription_whose_query_is_refused_is_not_saved(store: ReportStore) -> None:
    await store.upsert_many([(Report(repo="a/b", number=1, title="t"), "")])
    chat = _chat()
    slow = await _notice(_answerer(store, SPENT), "subscribe", "rollout at daily 09:00", chat)
    assert slow.key == "query_too_slow"
    # 520 ANDed Chinese characters in one chat argument: SQLite's "Expression tree is too
    # large", which the chat was told as "the database cannot be reached", after saving.
    anded = "".join(f"({chr(0x4E00 + i)})" for i in range(520))
    big = await _notice(_answerer(store), "subscribe", f"{anded} at daily 09:00", chat)
    assert big.key == "bad_query" and "too many terms" in big.params["error"]
    assert await _saved(store, chat) == 0
    ok = await _notice(_answerer(store), "subscribe", "rollout at daily 09:00", chat)
    assert (ok.key, ok.params["recent"]) == ("subscribed", "0")
    assert await _saved(store, chat) == 1


async def test_searches_past_the_bounds_are_refused_at_once(store: ReportStore) -> None:
    answerer = _answerer(store, SearchConfig(max_concurrent=2, max_per_user=1))
    async with answerer.gate.admit("42"):
        mine = await _notice(answerer, "find", "rollout", _chat("42"))
        assert mine.key == "search_busy_you"
        replay = await _notice(answerer, "subscribe", "test rollout", _chat("42"))
        assert replay.key == "search_busy_you"
        async with answerer.gate.admit("7"):
            everyone = await _notice(answerer, "find", "rollout", _chat("8"))
            assert everyone.key == "search_busy"
        assert (await _notice(answerer, "find", "rollout", _chat("8"))).key == "find_empty"
    assert (await _notice(answerer, "find", "rollout", _chat("42"))).key == "find_empty"
    assert answerer.gate.running == 0 and answerer.gate.by_user == {}
    for locale in Locale:
        assert notice_text("search_busy", locale, {}) and notice_text("search_busy_you", locale, {})
