"""A chat's subscription keeps what it does not change: adding or dropping a tag leaves its
query (and its size) as it was."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.answers import Answerer
from bot.core.commands import parse
from bot.core.models import Locale
from bot.core.select import DigestFilter
from bot.core.store.destinations import DestinationStore
from bot.core.store.reports import ReportStore
from bot.settings import BotConfig
from tests.kits.answers import private_chat
from tests.kits.delivery import FakeClock

NOW = datetime(2026, 9, 1, 9, 30, tzinfo=UTC)


async def test_subscribe_and_unsubscribe_keep_the_query(store: ReportStore) -> None:
    destinations = DestinationStore(store.engine, FakeClock(NOW))
    answerer = Answerer(store, destinations, BotConfig(), clock=FakeClock(NOW))
    chat = private_chat()
    kept = DigestFilter(tags=("rollout",), max_items=12, query="risk:* OR impact>=high")
    await destinations.save_chat(
        chat.platform, chat.chat_id, kept, timezone="UTC", locale=Locale.EN
    )
    await answerer.answer(parse("subscribe", "sglang"), chat)
    dest = await destinations.find(chat.platform, chat.chat_id)
    assert dest is not None
    assert (dest.filter.tags, dest.filter.query, dest.filter.max_items) == (
        ("rollout", "sglang"),
        "risk:* OR impact>=high",
        12,
    )
    await answerer.answer(parse("unsubscribe", "rollout"), chat)
    dest = await destinations.find(chat.platform, chat.chat_id)
    assert dest is not None
    assert (dest.filter.tags, dest.filter.query) == (("sglang",), "risk:* OR impact>=high")
