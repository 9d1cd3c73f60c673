"""Issue 17's pickers end in the typed command: what a pick means as query text, the cadences
offered, and the tags and repos offered (with counts, most first)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.chat.commands import parse
from bot.chat.picker import CADENCES, EmptyPickError, Pick, known_choices, picked_query
from bot.chat.requests import Subscribe
from bot.core.models import Locale, Platform
from bot.core.query import Field, Or
from bot.core.query import parse as parse_query
from bot.core.render.picker_labels import picker_keys, picker_label
from bot.core.reports.model import Report
from bot.core.store.reports import ReportStore
from bot.core.timing.cadence import parse_cadence
from bot.core.timing.cron import next_fire


def test_tags_are_or_ed_and_repos_and_impact_narrow_them() -> None:
    assert picked_query(["rollout", "fsdp"], [], None) == "(tag:rollout OR tag:fsdp)"
    assert picked_query(["rollout"], [], None) == "tag:rollout"
    both = picked_query(["rollout", "fsdp"], ["verl-project/verl"], "medium")
    assert both == "(tag:rollout OR tag:fsdp) repo:verl-project/verl impact>=medium"
    assert picked_query([], ["a/b", "c/d"], None) == "(repo:a/b OR repo:c/d)"
    assert picked_query([], [], "high") == "impact>=high"
    assert picked_query(["ci", "ci"], [], None) == "tag:ci", "a tag picked twice counts once"


def test_a_tag_the_query_language_must_quote_comes_back_whole() -> None:
    text = picked_query(["a:b", "two words"], [], None)
    assert parse_query(text) == Or((Field("tag", ":", "a:b"), Field("tag", ":", "two words")))


def test_nothing_picked_is_an_error_and_so_is_an_unknown_impact() -> None:
    with pytest.raises(EmptyPickError):
        picked_query([], [], None)
    with pytest.raises(ValueError, match="impact must be one of"):
        picked_query(["ci"], [], "huge")


def test_every_offered_cadence_is_one_the_typed_command_takes() -> None:
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    for cadence in CADENCES:
        assert parse_cadence(cadence, next_fire=next_fire, now=now).text == cadence
    assert CADENCES[-1] == "now"


def test_a_pick_is_the_typed_subscribe_command() -> None:
    pick = Pick(tags=("breaking", "rollout"), min_impact="high", cadence="weekly fri 17:00")
    request = parse("subscribe", pick.command_text())
    assert isinstance(request, Subscribe)
    assert request.typed.text == "(tag:breaking OR tag:rollout) impact>=high"
    assert request.cadence == "weekly fri 17:00"
    assert request.typed.query is not None


async def test_the_offered_tags_and_repos_are_counted_most_first(store: ReportStore) -> None:
    tags = [["rollout", "fix"], ["rollout"], ["ci"], ['bad"quote', "rollout"]]
    repos = ["verl-project/verl", "verl-project/verl", "sgl/sglang", "verl-project/verl"]
    await store.upsert_many(
        [
            (Report(repo=repo, number=10 + i, title=f"change {i}", tags=t), "")
            for i, (t, repo) in enumerate(zip(tags, repos, strict=True))
        ]
    )
    found = await known_choices(store, datetime.now(UTC))
    assert found.tags == [("rollout", 3), ("ci", 1), ("fix", 1)], "a tag with a quote is left out"
    assert found.repos == [("verl-project/verl", 3), ("sgl/sglang", 1)]


def test_every_picker_word_is_in_english_and_chinese_with_the_platforms_command() -> None:
    params = {"number": "1", "query": "q", "cadence": "now", "next": "now"}
    for key in picker_keys():
        english, chinese = (picker_label(key, locale, None, **params) for locale in Locale)
        assert english and chinese and english != chinese, key
    assert "/pr subscribe" in picker_label("intro", Locale.EN, Platform.SLACK)
    assert "/subscribe" in picker_label("keyboard", Locale.ZH)
