"""Listings state a filter as the one query its digest evaluates: a config channel's tags are
any of them (an OR), and its repos and excluded tags are part of it. Each listed query, parsed
back, matches the same reports as the filter (the sample reports of examples/reports and
generated ones); the chat's `subscriptions`, `prdigest subscriptions list`, status and the
Slack Home tab print it."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.adapters.slack.home import home_view
from bot.chat.answers import Answerer, Chat, Notice
from bot.chat.commands import parse as parse_command
from bot.chat.home import HomeData, HomeSubscription, must_read_query
from bot.core.clock import utc_clock
from bot.core.digest.filter_query import EVERYTHING
from bot.core.digest.select import DigestFilter, StoredReport
from bot.core.digest.select import matches as keeps
from bot.core.models import Layout, Locale, Origin, Platform, Verbosity
from bot.core.query import matches, parse, unparse
from bot.core.render.labels import notice_text
from bot.core.reports.parse.parser import parse_markdown
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import Subscription, SubscriptionStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from bot.settings import load_config

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
EXAMPLES = sorted(Path("examples/reports").glob("*.md"))
SAMPLES = [
    StoredReport(parse_markdown(path.read_text(encoding="utf-8")).report, seq=i)
    for i, path in enumerate(EXAMPLES, 1)
]
VERL = DigestFilter(
    repos=("verl-project/verl",), tags=("rollout", "sglang", "trainer"), exclude_tags=("ci",)
)
FILTERS = [
    VERL,
    DigestFilter(tags=("rollout", "sglang", "trainer")),
    DigestFilter(repos=("verl", "sgl-project/sglang"), exclude_tags=("ci", "docs")),
    DigestFilter(tags=("weight sync", "fix"), query="权重 OR impact>=high"),
    DigestFilter(repos=("vllm-project/vllm",), query="risk:* -tag:docs"),
    DigestFilter(query="#7422 OR (tag:rollout file:verl/workers/**)"),
    DigestFilter(),
]
TAGS = ["rollout", "sglang", "trainer", "ci", "fix", "fsdp", "weight sync", "perf"]
REPOS = ["verl-project/verl", "verl", "sgl-project/sglang", "vllm-project/vllm", "sglang"]


def test_a_config_channel_is_listed_as_the_query_it_evaluates() -> None:
    assert VERL.listed_query() == (
        "repo:verl-project/verl (tag:rollout OR tag:sglang OR tag:trainer) -tag:ci"
    )
    assert DigestFilter(tags=("Weight Sync",)).listed_query() == 'tag:"weight sync"'
    assert DigestFilter().listed_query() == EVERYTHING


def _same_matches(flt: DigestFilter, items: list[StoredReport]) -> None:
    listed = flt.listed_query()
    if listed == EVERYTHING:
        assert flt.query_ast is None
        return
    query = parse(listed)
    for item in items:
        wanted = keeps(item, flt, NOW)
        assert matches(query, item.report, now=NOW) == wanted, (listed, item.report.ref)


def test_the_sample_reports_are_read() -> None:
    assert len(SAMPLES) >= 5  # the round trip below has reports to disagree on


@pytest.mark.parametrize("flt", FILTERS, ids=lambda f: f.listed_query())
def test_each_listed_query_parses_back_to_the_same_matches(flt: DigestFilter) -> None:
    _same_matches(flt, SAMPLES)
    assert any(keeps(item, flt, NOW) for item in SAMPLES) or flt.query


def test_generated_filters_round_trip_over_the_samples() -> None:
    rng = random.Random(7422)
    for _ in range(300):
        flt = DigestFilter(
            repos=tuple(rng.sample(REPOS, rng.randint(0, 2))),
            tags=tuple(rng.sample(TAGS, rng.randint(0, 3))),
            exclude_tags=tuple(rng.sample(TAGS, rng.randint(0, 2))),
        )
        _same_matches(flt, SAMPLES)


CONFIG = """\
timezone: UTC
channels:
  - name: verl
    platform: telegram
    target: "-100"
    repos: [verl-project/verl]
    tags: [rollout, sglang, trainer]
    exclude_tags: [ci]
"""
LISTED = "repo:verl-project/verl (tag:rollout OR tag:sglang OR tag:trainer) -tag:ci"


async def test_the_chat_lists_a_config_channel_as_its_query(
    store: ReportStore, tmp_path: Path
) -> None:
    path = tmp_path / "bot.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    config = load_config(path)
    await SubscriptionStore(store.engine).sync_config(config)
    answerer = Answerer(store, DestinationStore(store.engine), config, clock=utc_clock)

    async def is_admin() -> bool:
        return True

    chat = Chat(Platform.TELEGRAM, "-100", "ada", is_admin, Locale.EN, user_name="ada")
    answer = await answerer.answer(parse_command("subscriptions", ""), chat)
    assert isinstance(answer.reply, Notice)
    text = notice_text(answer.reply.key, Locale.EN, answer.reply.params)
    assert f"1. {LISTED} · " in text


def _subscription(flt: DigestFilter) -> Subscription:
    return Subscription(
        id=1,
        destination_id=1,
        platform=Platform.SLACK,
        target="D0ADA",
        number=1,
        name="verl",
        origin=Origin.CONFIG,
        filter=flt,
        schedule="0 9 * * *",
        cadence="0 9 * * *",
        timezone="UTC",
        locale=Locale.EN,
        layout=Layout.FLAT,
        verbosity=Verbosity.STANDARD,
        owner=None,
        post_empty=False,
        locked=False,
        watermark=0,
        active=True,
        deactivated_reason=None,
    )


def test_the_home_tab_lists_the_query_and_finds_must_reads_with_the_whole_filter() -> None:
    sub = _subscription(VERL)
    listed = HomeSubscription(sub.number, sub.target, sub.filter.listed_query(), sub.cadence, "-")
    view = home_view(HomeData([listed], []), [], Locale.EN, "D0ADA")
    assert any(LISTED in json.dumps(block, ensure_ascii=False) for block in view["blocks"])
    wanted = must_read_query([sub])
    assert wanted is not None
    assert unparse(wanted) == f"rec:must_read {LISTED}"
    assert must_read_query([_subscription(DigestFilter())]) == parse("rec:must_read")
