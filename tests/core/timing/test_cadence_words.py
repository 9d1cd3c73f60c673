"""The pickers' cadence wording, typed back: every label of Slack's modal and Telegram's keyboard
is read as the cadence it labels, and what is kept is the canonical text (`daily 09:00`)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.chat.answers import Answerer, Chat, Notice
from bot.chat.commands import parse, parse_pr_text
from bot.chat.picker import CADENCES
from bot.chat.requests import Subscribe
from bot.core.clock import utc_clock
from bot.core.models import Locale, Platform
from bot.core.render.picker_labels import picker_keys, picker_label
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import SubscriptionStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from bot.core.timing.cadence import Cadence, CadenceError, parse_cadence
from bot.core.timing.cadence_words import canonical_cadence
from bot.core.timing.cron import next_fire
from bot.settings import BotConfig
from bot.settings.values import read_cadence

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LABEL_KEYS = sorted(key for key in picker_keys() if key.startswith("cadence_"))


def read(text: str) -> Cadence:
    return parse_cadence(text, next_fire=next_fire, now=NOW)


def test_every_cadence_a_picker_offers_has_a_label() -> None:
    assert sorted(f"cadence_{cadence}" for cadence in CADENCES) == LABEL_KEYS


@pytest.mark.parametrize("locale", list(Locale))
@pytest.mark.parametrize("key", LABEL_KEYS)
def test_a_label_typed_as_shown_is_the_cadence_of_its_key(key: str, locale: Locale) -> None:
    canonical = key.removeprefix("cadence_")
    for platform in (None, Platform.SLACK, Platform.TELEGRAM):
        label = picker_label(key, locale, platform)
        for typed in (label, label.upper(), f"  {label}  ".replace(" ", "  ")):
            assert read(typed).text == canonical, typed
            assert read(typed).cron == read(canonical).cron


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        ("每天 09:00", "daily 09:00"),
        ("每天 ０９：００", "daily 09:00"),  # full-width digits and colon
        ("每天09:00", "daily 09:00"),
        ("每日\u30007:05", "daily 07:05"),  # an ideographic space, a one-digit hour
        ("工作日 09:30", "workdays 09:30"),
        ("每周五 17:00", "weekly fri 17:00"),
        ("周一 08:00", "weekly mon 08:00"),
        ("每周日 10:00", "weekly sun 10:00"),
        ("周天 10:00", "weekly sun 10:00"),
        ("星期三 07:15", "weekly wed 07:15"),
        ("立即", "now"),
        ("实时", "now"),
        ("立即（PR到达时）", "now"),
        ("every day at 09:00", "daily 09:00"),
        ("Every Day at 7:05", "daily 07:05"),
        ("workdays at 09:30", "workdays 09:30"),
        ("Mondays at 08:30", "weekly mon 08:30"),
        ("Sundays at 18:00", "weekly sun 18:00"),
        ("every friday at 17:00", "weekly fri 17:00"),
        ("at once", "now"),
        ("AT ONCE, as PRs arrive", "now"),
    ],
)
def test_the_general_wording_is_read_as_its_canonical_cadence(typed: str, canonical: str) -> None:
    assert read(typed).text == canonical


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        (
            "每月 09:00",
            "cadence: '每月 09:00' is not a cadence (use a cron like '0 9 * * mon-fri', "
            "'daily 09:00', 'workdays 09:30', 'weekly fri 17:00' or 'now')",
        ),
        (
            "every day at",
            "cadence: 'every day at' is not a cadence (use a cron like '0 9 * * mon-fri', "
            "'daily 09:00', 'workdays 09:30', 'weekly fri 17:00' or 'now')",
        ),
        ("每天 25:00", "cadence: bad time '25:00' (use HH:MM, 00:00-23:59)"),
        ("every day at noon", "cadence: bad time 'noon' (use HH:MM, 00:00-23:59)"),
        ("Fridays at 9am", "cadence: bad time '9am' (use HH:MM, 00:00-23:59)"),
        ("周八 09:00", "cadence: '周八 09:00' is not a cadence (use a cron like "
         "'0 9 * * mon-fri', 'daily 09:00', 'workdays 09:30', 'weekly fri 17:00' or 'now')"),
    ],
)  # fmt: skip
def test_nonsense_is_still_refused_with_what_was_wrong(typed: str, message: str) -> None:
    with pytest.raises(CadenceError) as caught:
        read(typed)
    assert str(caught.value) == message


@pytest.mark.parametrize("typed", ["0 9 * * mon-fri", "09:00 mon-fri", "weekly fri 17:00", "now"])
def test_a_canonical_cadence_is_left_to_the_cadence_parser(typed: str) -> None:
    assert canonical_cadence(typed) in (None, typed)
    assert read(typed).text == typed


@pytest.mark.parametrize(
    ("typed", "query", "cadence"),
    [
        ("subscribe rollout at 每天 09:00", "rollout", "每天 09:00"),
        ("subscribe rollout at every day at 09:00", "rollout", "every day at 09:00"),
        ("subscribe look at this at Fridays at 17:00", "look at this", "Fridays at 17:00"),
        ("subscribe rollout at at once, as PRs arrive", "rollout", "at once, as PRs arrive"),
        ("subscribe look at this at daily 09:00", "look at this", "daily 09:00"),
    ],
)
def test_subscribe_reads_wording_that_holds_an_at_whole(
    typed: str, query: str, cadence: str
) -> None:
    request = parse_pr_text(typed)
    assert isinstance(request, Subscribe)
    assert (request.typed.text, request.cadence) == (query, cadence)


def test_a_config_schedule_in_the_pickers_wording_is_read_as_its_cadence() -> None:
    read_in = read_cadence({"schedule": "每周五 17:00"})
    assert (read_in["cadence"], read_in["schedule"]) == ("weekly fri 17:00", "0 17 * * fri")
    assert read_cadence({"cadence": "workdays at 09:30"})["cadence"] == "workdays 09:30"


def _chat() -> Chat:
    async def is_admin() -> bool:
        return True

    return Chat(Platform.TELEGRAM, "-100", "42", is_admin, Locale.ZH, user_name="ada")


async def test_a_typed_label_is_stored_and_echoed_canonically(store: ReportStore) -> None:
    answerer = Answerer(store, DestinationStore(store.engine), BotConfig(), clock=utc_clock)
    slack = await answerer.answer(parse_pr_text("subscribe rollout at 每天 ０９：００"), _chat())
    telegram = await answerer.answer(parse("subscribe", "sglang at every day at 07:30"), _chat())
    for answer, cadence in ((slack, "daily 09:00"), (telegram, "daily 07:30")):
        assert isinstance(answer.reply, Notice) and answer.reply.key == "subscribed"
        assert answer.reply.params["cadence"] == cadence
    stored = await SubscriptionStore(store.engine).all()
    assert [(s.filter.query, s.cadence, s.schedule) for s in stored] == [
        ("rollout", "daily 09:00", "0 9 * * *"),
        ("sglang", "daily 07:30", "30 7 * * *"),
    ]
