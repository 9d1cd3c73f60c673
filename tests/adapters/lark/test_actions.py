"""A Feishu digest card's buttons end to end: the card-action callback sealed as Feishu seals
it, the answer it returns (toast, updated card) and the cards it posts in the card's thread."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bot.core.models import Platform
from tests.fakes.lark.api import FakeLark, Posted
from tests.kits.lark import ALICE, BOB, GROUP, LarkBot, buttons, card_text

READ = "✅"


@asynccontextmanager
async def digest_group(
    tmp_path: Path, max_items: int = 30, **channel: Any
) -> AsyncIterator[tuple[LarkBot, list[Posted]]]:
    """GROUP subscribed in the config (English), #7422 and #7500 stored, its digest posted."""
    line = {"name": "team", "platform": "lark", "target": GROUP, "max_items": max_items}
    config = {"locale": "en", "channels": [{**line, **channel}], "lark": {"receive": "webhook"}}
    async with FakeLark() as fake, LarkBot.running(fake, tmp_path, config) as bot:
        await bot.service.subscriptions.sync_config(bot.service.ctx.config)
        await bot.add_report(7500)
        yield bot, await bot.deliver_digest()


def reads(card: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in buttons(card) if b["tag"] == "button" and READ in b["text"]["content"]]


def value(card: dict[str, Any], prefix: str, number: int) -> str:
    """The value of the card's button (or ⋯ option) `prefix:…#number`."""
    found = [b["value"]["data"] for b in buttons(card) if b["tag"] == "button"]
    found += [o["value"] for b in buttons(card) if b["tag"] == "overflow" for o in b["options"]]
    [match] = [v for v in found if v.startswith(prefix + ":") and v.endswith(f"#{number}")]
    return str(match)


async def test_read_updates_the_card_for_everyone_and_tells_the_thread(tmp_path: Path) -> None:
    async with digest_group(tmp_path) as (bot, [card]):
        assert len(reads(card.card)) == 2
        answer = await bot.press(GROUP, ALICE, card.message_id, value(card.card, "read", 7422))
        assert answer["toast"]["type"] == "success" and "alice" in answer["toast"]["content"]
        updated = answer["card"]["data"]
        assert answer["card"]["type"] == "raw" and updated["config"]["update_multi"] is True
        assert "✅ alice" in card_text(updated)
        [left] = reads(updated)
        assert left["value"]["data"].endswith("#7500")
        [line] = await bot.replies(GROUP, card.message_id)
        assert "#7422" in card_text(line.card) and line.in_thread

        again = await bot.press(GROUP, BOB, card.message_id, value(card.card, "read", 7422))
        assert "✅ alice, bob" in card_text(again["card"]["data"])


async def test_risks_post_in_the_cards_thread(tmp_path: Path) -> None:
    async with digest_group(tmp_path) as (bot, [card]):
        await bot.press(GROUP, BOB, card.message_id, value(card.card, "risks", 7422), option=True)
        [risks] = await bot.replies(GROUP, card.message_id)
        assert risks.in_thread and "Risks" in card_text(risks.card)


async def test_the_full_report_is_one_card_whose_sections_flip_in_place(tmp_path: Path) -> None:
    async with digest_group(tmp_path) as (bot, [card]):
        answer = await bot.press(GROUP, BOB, card.message_id, value(card.card, "report", 7422))
        assert "card" not in answer, "the digest card stays as it is"
        [pager] = await bot.replies(GROUP, card.message_id)
        assert pager.in_thread and "#7422" in card_text(pager.card)
        tabs = [b for b in buttons(pager.card) if b["value"]["data"].startswith("sec:")]
        assert [b["text"]["content"] for b in tabs][:3] == [
            "▸ Summary",
            "Motivation",
            "Implementation",
        ]
        shown = []
        for tab in tabs:
            flipped = await bot.press(GROUP, BOB, pager.message_id, tab["value"]["data"])
            shown.append(card_text(flipped["card"]["data"]))
        for section in ("Motivation", "Implementation", "Key files", "Risks", "Related"):
            assert any(section in text for text in shown), section
        assert len(bot.fake.sent_to(GROUP)) == 2, "flipping posts nothing new"


async def test_more_posts_the_next_page_in_the_thread(tmp_path: Path) -> None:
    async with digest_group(tmp_path, max_items=1) as (bot, [card]):
        [more] = [
            b["value"]["data"]
            for b in buttons(card.card)
            if b["tag"] == "button" and b["value"]["data"].startswith("more:")
        ]
        assert "+1" in card_text(card.card)
        await bot.press(GROUP, BOB, card.message_id, more)
        [page] = await bot.replies(GROUP, card.message_id)
        shown = card_text(card.card) + card_text(page.card)
        assert "#7422" in shown and "#7500" in shown


async def test_snooze_is_told_and_mute_follows_the_admin_rule(tmp_path: Path) -> None:
    async with digest_group(tmp_path) as (bot, [card]):
        snoozed = await bot.press(
            GROUP, BOB, card.message_id, value(card.card, "snooze", 7500), option=True
        )
        assert "#7500" in snoozed["toast"]["content"]
        mute = next(
            o["value"]
            for b in buttons(card.card)
            if b["tag"] == "overflow"
            for o in b["options"]
            if o["value"].startswith("mute:")
        )
        refused = await bot.press(GROUP, BOB, card.message_id, mute, option=True)
        assert "admins" in refused["toast"]["content"]
        muted = await bot.press(GROUP, ALICE, card.message_id, mute, option=True)
        assert "admins" not in muted["toast"]["content"]
        [sub] = await bot.service.subscriptions.of(Platform.LARK, GROUP)
        assert sub.active


async def test_a_forged_press_is_refused_and_reads_nothing(tmp_path: Path) -> None:
    async with digest_group(tmp_path) as (bot, [card]):
        press = value(card.card, "read", 7422)
        replayed = await bot.press_raw(GROUP, ALICE, card.message_id, press, age=900)
        assert replayed.status_code == 401
        answer = await bot.press(GROUP, BOB, card.message_id, press)
        assert "alice" not in card_text(answer["card"]["data"])
