"""What `/find` answers with: the reports it found (each linked where the platform can), and
past "+N more" a narrower query only when the store says it really narrows."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.chat.answers import Answerer, Chat, FoundReports
from bot.chat.commands import parse
from bot.core.models import Locale, Platform
from bot.core.query.parser import parse as parse_query
from bot.core.reports.model import ImpactLevel, Report
from bot.core.store.finder.search import search
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from bot.settings import BotConfig
from tests.kits.delivery import FakeClock

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _chat() -> Chat:
    async def is_admin() -> bool:
        return True

    return Chat(Platform.TELEGRAM, "42", "42", is_admin, Locale.EN, user_name="ada", private=True)


async def _found(store: ReportStore, text: str) -> FoundReports:
    answerer = Answerer(store, DestinationStore(store.engine), BotConfig(), clock=FakeClock(NOW))
    answer = await answerer.answer(parse("find", text), _chat())
    assert isinstance(answer.reply, FoundReports)
    return answer.reply


async def _store(store: ReportStore, impacts: list[ImpactLevel], title: str = "rollout") -> None:
    reports = [
        Report(repo="a/b", number=n, title=title, impact_level=impact, merged_at=NOW)
        for n, impact in enumerate(impacts, start=1)
    ]
    await store.upsert_many([(report, "") for report in reports])


async def _count(store: ReportStore, text: str) -> int:
    return (await search(store, parse_query(text), limit=0, now=NOW)).total


async def test_the_answer_carries_the_reports_it_lists(store: ReportStore) -> None:
    await _store(store, [ImpactLevel.MEDIUM] * 3)
    found = await _found(store, "rollout")
    assert found.key == "find_results"
    assert sorted(report.number for report in found.reports) == [1, 2, 3]


async def test_more_suggests_a_term_that_really_narrows(store: ReportStore) -> None:
    await _store(store, [ImpactLevel.LOW] * 5 + [ImpactLevel.MEDIUM] * 8)
    found = await _found(store, "rollout")
    assert (found.key, len(found.reports)) == ("find_results_more", 10)
    assert found.params["example"] == "/find rollout impact>=medium"
    assert 0 < await _count(store, "rollout impact>=medium") < 13


async def test_more_tries_the_next_term_when_the_first_narrows_nothing(
    store: ReportStore,
) -> None:
    await _store(store, [ImpactLevel.MEDIUM] * 9 + [ImpactLevel.HIGH] * 3)
    found = await _found(store, "rollout")
    # impact>=medium and since:30d keep all twelve; impact:high keeps three
    assert found.params["example"] == "/find rollout impact:high"
    assert await _count(store, "rollout impact>=medium") == 12


async def test_more_suggests_nothing_when_no_term_narrows(store: ReportStore) -> None:
    await _store(store, [ImpactLevel.MEDIUM] * 12)
    found = await _found(store, "rollout")
    assert found.key == "find_results_more_bare" and "example" not in found.params


async def test_an_or_query_is_narrowed_as_a_whole(store: ReportStore) -> None:
    await _store(store, [ImpactLevel.LOW] * 6 + [ImpactLevel.HIGH] * 6)
    found = await _found(store, "rollout OR fsdp")
    assert found.params["example"] == "/find (rollout OR fsdp) impact>=medium"
