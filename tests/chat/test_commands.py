"""The shared command table: parsing what people type, and what the bot answers."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.chat.answers import Answerer, Chat, DigestAnswer, Notice, SectionAnswer
from bot.chat.commands import COMMAND_TABLE, UsageError, parse, parse_mention, parse_pr_text
from bot.chat.requests import (
    PLAIN_VERBS,
    Ask,
    Find,
    OpenPicker,
    SetSchedule,
    ShowReport,
    Subscribe,
    Unsubscribe,
    Verb,
)
from bot.core.clock import utc_clock
from bot.core.models import Locale, Platform, Section
from bot.core.reports.parse.parser import parse_file
from bot.core.reports.refs import PRRef
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import SubscriptionStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from bot.settings import BotConfig
from tests.kits.delivery import FakeClock, add_reports
from tests.kits.paths import SEED


@pytest.mark.parametrize(
    ("text", "ref", "section"),
    [
        ("7422", PRRef(7422), Section.SUMMARY),
        ("7422 risks", PRRef(7422), Section.RISKS),
        ("verl-project/verl#7422 files", PRRef(7422, "verl-project/verl"), Section.FILES),
        (
            "https://github.com/verl-project/verl/pull/7422 related",
            PRRef(7422, "verl-project/verl"),
            Section.RELATED,
        ),
        ("#7422 full public", PRRef(7422), Section.FULL),
    ],
)
def test_slack_pr_text_names_a_pr_and_a_section(text: str, ref: PRRef, section: Section) -> None:
    assert parse_pr_text(text) == ShowReport(ref, section, public=text.endswith("public"))


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("7422abc", "bad_ref"),
        ("٧٤٢٢", "bad_ref"),
        ("7422 nonsense", "unknown_section"),
        ("99999999999999", "bad_ref"),
    ],
)
def test_bad_pr_input_gets_a_usage_notice(text: str, key: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_pr_text(text)
    assert caught.value.key == key


def test_empty_pr_text_is_help() -> None:
    assert parse_pr_text("") == Ask(Verb.HELP)
    assert parse_pr_text("   ") == Ask(Verb.HELP)


def test_slack_subcommands_and_telegram_commands_parse_the_same() -> None:
    slack = parse_pr_text(
        "subscribe tag:rollout -tag:ci repo:verl-project/verl at weekly fri 17:00"
    )
    telegram = parse("subscribe", "tag:rollout -tag:ci repo:verl-project/verl at weekly fri 17:00")
    assert slack == telegram
    assert isinstance(slack, Subscribe)
    assert slack.typed.text == "tag:rollout -tag:ci repo:verl-project/verl"
    assert slack.cadence == "weekly fri 17:00"
    assert parse("unsubscribe", "2 3 2") == Unsubscribe(numbers=(2, 3))
    assert parse("unsubscribe", "all") == Unsubscribe(everything=True)
    assert parse("subscribe", "") == OpenPicker()


def test_risks_shortcut_is_pr_risks() -> None:
    assert parse("risks", "7422") == ShowReport(PRRef(7422), Section.RISKS)


@pytest.mark.parametrize(
    ("text", "cron", "tz"),
    [
        ("09:00", "0 9 * * *", None),
        ("9:30 mon-fri Europe/Berlin", "30 9 * * mon-fri", "Europe/Berlin"),
        ('"0 9 * * mon-fri" Asia/Shanghai', "0 9 * * mon-fri", "Asia/Shanghai"),
        ("0 9 * * mon-fri", "0 9 * * mon-fri", None),
    ],
)
def test_schedule_accepts_a_time_or_a_cron(text: str, cron: str, tz: str | None) -> None:
    assert parse("schedule", text) == SetSchedule(cron, tz)


@pytest.mark.parametrize(
    ("text", "key"), [("", "usage_schedule"), ("09:00 Mars/Base", "bad_timezone")]
)
def test_bad_schedules_name_the_problem(text: str, key: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse("schedule", text)
    assert caught.value.key == key


@pytest.mark.parametrize(
    ("text", "section"),
    [
        ("<@U0BOT> show risks for #7422", Section.RISKS),
        ("what files did 7422 touch", Section.FILES),
        ("#7422 的风险", Section.RISKS),
        ("related to 7422", Section.RELATED),
        ("<@U0BOT> 7422", Section.SUMMARY),
        ("tell me about verl-project/verl#7422 please", Section.SUMMARY),
    ],
)
def test_mentions_in_english_and_chinese(text: str, section: Section) -> None:
    found = parse_mention(text)
    assert isinstance(found, ShowReport)
    assert (found.ref.number, found.section, found.public) == (7422, section, True)


def test_a_mention_without_a_pr_is_not_a_command() -> None:
    assert parse_mention("<@U0BOT> thanks, great bot") is None


def test_every_command_in_the_table_parses() -> None:
    samples = {
        Verb.PR: "7422",
        Verb.FIND: "rollout",
        Verb.SUBSCRIBE: "x",
        Verb.UNSUBSCRIBE: "all",
        Verb.SCHEDULE: "09:00",
    }
    for spec in COMMAND_TABLE:
        assert parse(spec.verb.value, samples.get(spec.verb, "")).verb is spec.verb


def _chat(admin: bool = True, chat_id: str = "-100") -> Chat:
    async def is_admin() -> bool:
        return admin

    return Chat(Platform.TELEGRAM, chat_id, "42", is_admin, Locale.EN, user_name="ada")


async def _answerer(store: ReportStore) -> Answerer:
    return Answerer(store, DestinationStore(store.engine), BotConfig(), clock=utc_clock)


async def test_pr_answers_from_the_store(store: ReportStore) -> None:
    await store.upsert(parse_file(SEED).report)
    answer = await (await _answerer(store)).answer(parse("risks", "7422"), _chat())
    assert isinstance(answer.reply, SectionAnswer)
    assert answer.reply.item.report.risk_flags[0] == "移除隐式配置兜底"
    missing = await (await _answerer(store)).answer(parse("pr", "99999999"), _chat())
    assert missing.reply == Notice("not_found", {"ref": "#99999999"})


async def test_only_admins_change_subscriptions(store: ReportStore) -> None:
    answerer = await _answerer(store)
    refused = await answerer.answer(parse("subscribe", "tag:rollout"), _chat(admin=False))
    assert refused.reply == Notice("not_admin")
    assert await SubscriptionStore(store.engine).all() == []
    done = await answerer.answer(parse("subscribe", "tag:rollout -tag:ci"), _chat(admin=True))
    assert isinstance(done.reply, Notice) and done.reply.key == "subscribed"
    assert done.reply.params["number"] == "1"
    assert done.announce is not None and done.announce.params["user"] == "ada"
    [sub] = await SubscriptionStore(store.engine).all()
    assert (sub.filter.query, sub.owner) == ("tag:rollout -tag:ci", None)


async def test_unsubscribe_by_number_and_all(store: ReportStore) -> None:
    answerer = await _answerer(store)
    await answerer.answer(parse("subscribe", "rollout"), _chat())
    await answerer.answer(parse("subscribe", "sglang at now"), _chat())
    one = await answerer.answer(parse("unsubscribe", "1"), _chat())
    assert one.reply == Notice("unsubscribed", {"items": "1. rollout"})
    [left] = await SubscriptionStore(store.engine).all()
    assert (left.number, left.schedule) == (2, "now")
    missing = await answerer.answer(parse("unsubscribe", "7"), _chat())
    assert missing.reply == Notice("unknown_subscription", {"numbers": "7"})
    stopped = await answerer.answer(parse("unsubscribe", "all"), _chat())
    assert stopped.reply == Notice("unsubscribed", {"items": "2. sglang"})
    assert await SubscriptionStore(store.engine).all() == []
    again = await answerer.answer(parse("subscribe", "fix"), _chat())
    assert isinstance(again.reply, Notice) and again.reply.params["number"] == "1"


async def test_digest_now_shows_what_the_next_digest_would(store: ReportStore) -> None:
    answerer = await _answerer(store)
    await answerer.answer(parse("subscribe", "rollout"), _chat())
    empty = await answerer.answer(parse("digest"), _chat())
    assert empty.reply == Notice("digest_empty")
    await add_reports(store, [1, 2], tags=["rollout"])
    await add_reports(store, [3], tags=["ci"])
    answer = await answerer.answer(parse("digest"), _chat())
    assert isinstance(answer.reply, DigestAnswer)
    assert answer.reply.digest.total == 2


async def test_schedule_is_validated_and_saved(store: ReportStore) -> None:
    answerer = await _answerer(store)
    await answerer.answer(parse("subscribe", "rollout"), _chat())
    ok = await answerer.answer(parse("schedule", "08:15 Europe/Berlin"), _chat())
    assert isinstance(ok.reply, Notice) and ok.reply.key == "schedule_set"
    [dest] = await SubscriptionStore(store.engine).all()
    assert (dest.schedule, dest.timezone) == ("15 8 * * *", "Europe/Berlin")
    bad = await answerer.answer(parse("schedule", "0 25 * * *"), _chat())
    assert isinstance(bad.reply, Notice) and bad.reply.key == "bad_schedule"


async def test_the_next_digest_time_counts_from_the_injected_clock(store: ReportStore) -> None:
    clock = FakeClock(datetime(2026, 9, 1, 9, 30, tzinfo=UTC))
    answerer = Answerer(store, DestinationStore(store.engine), BotConfig(), clock=clock)
    await answerer.answer(parse("subscribe", "rollout"), _chat())
    ok = await answerer.answer(parse("schedule", "08:15 Europe/Berlin"), _chat())
    assert isinstance(ok.reply, Notice)
    assert ok.reply.params["next"] == "2026-09-02T08:15+02:00"


def test_every_plain_verb_has_a_handler_and_every_other_verb_a_request(
    store: ReportStore,
) -> None:
    answerer = Answerer(store, DestinationStore(store.engine), BotConfig(), clock=utc_clock)
    assert set(answerer.plain) == PLAIN_VERBS
    samples = {"pr": "7422", "find": "x", "subscribe": "x", "unsubscribe": "1", "schedule": "9:00"}
    typed = {verb: type(parse(verb.value, samples.get(verb.value, ""))) for verb in Verb}
    assert {verb for verb, kind in typed.items() if kind is Ask} == PLAIN_VERBS
    with pytest.raises(ValueError, match="pr takes arguments"):
        Ask(Verb.PR)


async def test_config_channels_are_changed_in_the_config_not_the_chat(store: ReportStore) -> None:
    config = BotConfig.model_validate(
        {"channels": [{"name": "team", "platform": "telegram", "target": "-100"}]}
    )
    await SubscriptionStore(store.engine).sync_config(config)
    answerer = Answerer(store, DestinationStore(store.engine), config, clock=utc_clock)
    answer = await answerer.answer(parse("unsubscribe", "1"), _chat())
    assert answer.reply == Notice("config_managed", {"name": "team"})
    added = await answerer.answer(parse("subscribe", "tag:breaking at now"), _chat())
    assert isinstance(added.reply, Notice) and added.reply.params["number"] == "2"
    everything = await answerer.answer(parse("unsubscribe", "all"), _chat())
    assert everything.reply == Notice("unsubscribed", {"items": "2. tag:breaking"})
    assert [s.name for s in await SubscriptionStore(store.engine).all()] == ["team"]


async def test_a_locked_config_channel_refuses_every_change_from_the_chat(
    store: ReportStore,
) -> None:
    config = BotConfig.model_validate(
        {"channels": [{"name": "team", "platform": "telegram", "target": "-100", "locked": True}]}
    )
    await SubscriptionStore(store.engine).sync_config(config)
    answerer = Answerer(store, DestinationStore(store.engine), config, clock=utc_clock)
    for verb, text in (("subscribe", "x"), ("unsubscribe", "all"), ("schedule", "08:00")):
        answer = await answerer.answer(parse(verb, text), _chat())
        assert answer.reply == Notice("locked", {"name": "team"}), verb


async def test_search_and_tags(store: ReportStore) -> None:
    await store.upsert(parse_file(SEED).report)
    answerer = await _answerer(store)
    found = await answerer.answer(parse("search", "dummy"), _chat())
    assert isinstance(found.reply, Notice) and "#7422" in found.reply.params["items"]
    assert found.reply.key == "find_results"
    tags = await answerer.answer(parse("tags"), _chat())
    assert isinstance(tags.reply, Notice) and "rollout (1)" in tags.reply.params["items"]


def test_every_notice_the_bot_can_say_exists_in_both_locales_and_renders() -> None:
    import re

    from bot.core.models import Format, Locale
    from bot.core.render.labels import notice_keys
    from bot.core.render.renderer import Renderer
    from tests.kits.paths import ROOT

    sources = "".join(path.read_text() for path in sorted((ROOT / "bot" / "chat").glob("*.py")))
    used = set(re.findall(r'(?:Notice|UsageError)\(\s*"([a-z_]+)"', sources))
    assert used, "the scan found the notice keys"
    assert used <= notice_keys(), used - notice_keys()
    renderer = Renderer()
    for key in sorted(notice_keys()):
        params = {name: "<!channel> & x" for name in re.findall(r"{(\w+)}", _any_text(key))}
        for fmt in Format:
            for locale in Locale:
                assert renderer.notice(key, fmt, locale, **params).text


def _any_text(key: str) -> str:
    from bot.core.render.notices import NOTICES

    return "".join(table[key] for table in NOTICES.values())


async def test_an_inbound_event_is_handled_once(store: ReportStore) -> None:
    from bot.core.store.dedupe import first_time

    assert await first_time(store.engine, "slack:Ev1")
    assert not await first_time(store.engine, "slack:Ev1")
    assert await first_time(store.engine, "telegram:1")


def test_find_reads_the_query_whole_and_search_is_its_alias() -> None:
    from bot.core.query import And, Field, Text

    found = parse("search", '"weight sync" -tag:ci')
    assert isinstance(found, Find) and found.typed.text == '"weight sync" -tag:ci'
    assert isinstance(found.typed.query, And)
    assert found.typed.query.items[0] == Text("weight sync", phrase=True)
    by_number = parse_pr_text("find #7422")
    assert isinstance(by_number, Find)
    assert by_number.typed.query == Field("number", ":", "7422")
    assert isinstance(parse_pr_text("search risk:FP8"), Find)
    # A mention that starts with find is a query, even when it names a number.
    mention = parse_mention("<@U0BOT> find number:7400..7500")
    assert isinstance(mention, Find)
    bad = parse("find", "rsk:x")
    assert isinstance(bad, Find) and bad.typed.query is None
    assert bad.typed.error.startswith("query: unknown field 'rsk'")
    with pytest.raises(UsageError) as caught:
        parse("find", "  ")
    assert caught.value.key == "usage_find"


async def test_a_forged_menu_value_marks_nothing(store: ReportStore) -> None:
    """`menu:REF` only opens a keyboard in the adapter; sent to the chat layer (a forged Slack
    button value) it is refused, not read as a snooze."""
    from bot.core.render.actions import EntryAction

    await store.upsert(parse_file(SEED).report)
    answerer = await _answerer(store)
    answer = await answerer.answer_action(EntryAction.MENU, "7422", _chat())
    assert isinstance(answer.reply, Notice) and answer.reply.key == "unknown_command"
    snoozed = await answerer.answer_action(EntryAction.SNOOZE, "7422", _chat())
    assert isinstance(snoozed.reply, Notice) and snoozed.reply.key != "unknown_command"
