"""Feishu commands end to end: events sealed as Feishu seals them, posted to POST /lark/events,
answered through ChatService, the answers read back from the strict fake Open API."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.core.models import Format, Locale, Platform
from bot.core.render.renderer import Renderer
from tests.fakes.lark.api import FakeLark
from tests.fakes.lark.events import url_verification
from tests.kits.lark import ALICE, BOB, DM, GROUP, MANAGER, LarkBot, card_text


def notice(key: str, locale: Locale = Locale.ZH, **params: str) -> str:
    return card_text(Renderer().notice(key, Format.LARK, locale, **params).payload["card"])


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[LarkBot]:
    async with FakeLark() as fake, LarkBot.running(fake, tmp_path) as running:
        yield running


async def test_a_mention_asking_for_risks_is_answered_in_its_thread(bot: LarkBot) -> None:
    asked = await bot.say(GROUP, BOB, "7422 风险")
    [answer] = await bot.replies(GROUP, asked)
    text = card_text(answer.card)
    assert answer.in_thread, "a group's answer goes in the asking message's thread"
    assert "#7422" in text and "风险" in text
    for words in ("#7422 的风险", "show risks for #7422", "/pr 7422 risks", "risks 7422"):
        again = await bot.say(GROUP, BOB, words)
        [same] = await bot.replies(GROUP, again)
        assert card_text(same.card) == text, words


async def test_a_group_message_that_does_not_mention_the_bot_is_not_answered(
    bot: LarkBot,
) -> None:
    quiet = await bot.say(GROUP, BOB, "7422 风险", mention=False)
    asked = await bot.say(GROUP, BOB, "7422")  # the chat's answers leave in order
    await bot.replies(GROUP, asked)
    assert [p for p in bot.fake.sent_to(GROUP) if p.parent_id == quiet] == []


async def test_a_one_to_one_chat_needs_no_mention_and_words_it_cannot_read_get_a_hint(
    bot: LarkBot,
) -> None:
    asked = await bot.say(DM, ALICE, "7422")
    [answer] = await bot.replies(DM, asked)
    assert not answer.in_thread and "#7422" in card_text(answer.card)
    hello = await bot.say(DM, ALICE, "hello there")
    [hint] = await bot.replies(DM, hello)
    assert card_text(hint.card) == notice("how_to_ask")


async def test_only_the_groups_owner_and_managers_change_its_subscriptions(bot: LarkBot) -> None:
    refused = await bot.say(GROUP, BOB, "subscribe rollout -ci at 09:00")
    [answer] = await bot.replies(GROUP, refused)
    assert card_text(answer.card) == notice("not_admin", chat="群")
    assert await bot.service.subscriptions.of(Platform.LARK, GROUP) == []

    made = await bot.say(GROUP, ALICE, "subscribe rollout -ci at 09:00")
    [announced] = await bot.replies(GROUP, made)
    assert "alice" in card_text(announced.card) and "tag:rollout -ci" in card_text(announced.card)
    made = await bot.say(GROUP, MANAGER, "subscribe tag:breaking at now")
    await bot.replies(GROUP, made)
    subs = await bot.service.subscriptions.of(Platform.LARK, GROUP)
    assert sorted(s.filter.query for s in subs) == ["tag:breaking", "tag:rollout -ci"]

    listed = await bot.say(GROUP, BOB, "subscriptions")
    [listing] = await bot.replies(GROUP, listed)
    assert "rollout -ci" in card_text(listing.card) and "tag:breaking" in card_text(listing.card)

    kept = await bot.say(GROUP, BOB, "unsubscribe all")
    await bot.replies(GROUP, kept)
    assert len(await bot.service.subscriptions.of(Platform.LARK, GROUP)) == 2
    gone = await bot.say(GROUP, ALICE, "unsubscribe all")
    await bot.replies(GROUP, gone)
    assert await bot.service.subscriptions.of(Platform.LARK, GROUP) == []


async def test_lark_admins_change_any_groups_subscriptions(tmp_path: Path) -> None:
    config = {"lark": {"receive": "webhook", "admins": [BOB]}}
    async with FakeLark() as fake, LarkBot.running(fake, tmp_path, config) as bot:
        made = await bot.say(GROUP, BOB, "subscribe rollout")
        await bot.replies(GROUP, made)
        assert len(await bot.service.subscriptions.of(Platform.LARK, GROUP)) == 1


async def test_anyone_subscribes_in_their_one_to_one_chat_and_gets_the_digest_there(
    bot: LarkBot,
) -> None:
    made = await bot.say(DM, ALICE, "subscribe rollout at 09:00")
    [answer] = await bot.replies(DM, made)
    assert "rollout" in card_text(answer.card)
    [sub] = await bot.service.subscriptions.of(Platform.LARK, DM)
    assert sub.target == DM
    await bot.add_report(7501)  # a rollout PR reviewed after the subscription was made
    [digest] = await bot.deliver_digest(DM)
    assert "#7501" in card_text(digest.card) and "#7422" not in card_text(digest.card)


async def test_help_lists_the_commands_as_feishu_types_them(bot: LarkBot) -> None:
    asked = await bot.say(GROUP, BOB, "help")
    [answer] = await bot.replies(GROUP, asked)
    text = card_text(answer.card)
    for verb in ("subscribe", "unsubscribe", "subscriptions", "find", "unread", "more"):
        assert f"/{verb}" in text


async def test_an_event_feishu_sends_again_is_answered_once(bot: LarkBot) -> None:
    asked, event = bot.message(GROUP, BOB, "7422")
    assert (await bot.post(event)).status_code == 200
    assert (await bot.post(event)).status_code == 200  # redelivered: same event_id
    await bot.replies(GROUP, asked)
    after = await bot.say(GROUP, BOB, "help")
    await bot.replies(GROUP, after)
    assert len([p for p in bot.fake.sent_to(GROUP) if p.parent_id == asked]) == 1


async def test_the_url_check_is_answered_with_its_challenge(bot: LarkBot) -> None:
    body = url_verification(str(bot.adapter.settings.secrets.verification_token), "c-123")
    response = await bot.post(body)
    assert response.status_code == 200 and response.json() == {"challenge": "c-123"}


async def test_forged_and_replayed_events_are_refused_and_change_nothing(bot: LarkBot) -> None:
    asked, event = bot.message(GROUP, ALICE, "subscribe rollout")
    old = await bot.post(event, age=600)
    assert old.status_code == 401 and "old" in old.json()["msg"]
    raw = json.dumps(event).encode()  # not encrypted, not signed: not from Feishu
    assert (await bot.post_raw(raw, {"Content-Type": "application/json"})).status_code == 401
    forged = dict(event, header={**event["header"], "token": "guessed"})
    assert (await bot.post(forged)).status_code == 401
    assert await bot.service.subscriptions.of(Platform.LARK, GROUP) == []
    assert [p for p in bot.fake.sent_to(GROUP) if p.parent_id == asked] == []
