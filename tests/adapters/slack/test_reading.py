"""A Slack channel reads its digest: Read, Snooze, Mute tag, "+N more" and Full report from
an entry's buttons (action_id `entry:…`, value as bot/core/render/actions.py writes it), the
✅ reaction on a digest message, and `/pr unread` and `/pr more`.

The digest is planned and delivered like a scheduled one, to the strict fake Slack.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode

import pytest
from sqlalchemy import select

from bot.adapters.slack.report_modal import NEXT_PAGE, PAGE_BLOCKS, report_view
from bot.core.digest.select import StoredReport
from bot.core.models import Locale
from bot.core.render.actions import ENTRY_ACTION_PREFIX, EntryAction, action_data
from bot.core.render.flow import RenderedMessage
from bot.core.reports.parse.parser import parse_file
from bot.core.store.sql.tables import digest_runs, reading_marks
from tests.fakes.slack.api import PostedMessage
from tests.fakes.slack.views import FakeView
from tests.kits.paths import SEED
from tests.kits.slack import (
    ADMIN,
    CHANNEL,
    USER,
    SlackBot,
    action_body,
    all_text,
    channel_posts,
    deliver_digest,
    event_body,
    shown_action,
    two_pr_channel,
    wait_for,
)
from tests.kits.waiting import until

REF = "verl-project/verl#7422"
_events = itertools.count(1)


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[SlackBot]:
    async with two_pr_channel(tmp_path, max_items=1, admin="root") as running:
        yield running


async def _digest(bot: SlackBot) -> PostedMessage:
    """Plan the channel's digest and deliver it; its (first) message."""
    return (await deliver_digest(bot))[0]


async def _press(
    bot: SlackBot,
    digest: PostedMessage,
    action: EntryAction,
    argument: str,
    user: str = USER,
    trigger_id: str | None = None,
) -> str:
    """Press the entry's button the digest shows (or choose it in the entry's menu); the
    response_url key its answers go to."""
    if action is EntryAction.REPORT and argument not in all_text(digest):
        # a PR of the "+N more" rest: the same button as a shown one, for this PR
        button = {"type": "button", "action_id": f"{ENTRY_ACTION_PREFIX}{action.value}",
                  "text": {"type": "plain_text", "text": "report"},
                  "value": action_data(action, argument)}  # fmt: skip
    else:
        button = shown_action(digest, action_data(action, argument))
    assert str(button["action_id"]).startswith(ENTRY_ACTION_PREFIX)
    key, url = bot.response_url(user=user)
    body = action_body(button, digest, url, user=user)
    if trigger_id is not None:
        payload = json.loads(parse_qs(body.decode())["payload"][0])
        payload["trigger_id"] = trigger_id
        body = urlencode({"payload": json.dumps(payload)}).encode()
    response = await bot.post(body)
    assert response.status_code == 200
    return key


def _thread(bot: SlackBot, digest: PostedMessage) -> list[PostedMessage]:
    return [m for m in channel_posts(bot.fake, CHANNEL) if m.thread_ts == digest.ts]


async def _marks(bot: SlackBot) -> list[tuple[str, str]]:
    async with bot.service.ctx.engine.connect() as conn:
        rows = await conn.execute(select(reading_marks.c.kind, reading_marks.c.subject))
        return sorted((str(r.kind), str(r.subject)) for r in rows)


async def test_read_is_told_in_the_digests_thread_with_who_read_it(bot: SlackBot) -> None:
    digest = await _digest(bot)
    await _press(bot, digest, EntryAction.READ, REF)
    [told] = await wait_for(lambda: _thread(bot, digest))
    assert f"✅ {REF} read by alice" in all_text(told)
    assert await _marks(bot) == [("read", REF)]


async def test_snooze_is_for_anyone_and_mute_for_admins_only(bot: SlackBot) -> None:
    digest = await _digest(bot)
    await _press(bot, digest, EntryAction.SNOOZE, REF)
    await wait_for(lambda: _thread(bot, digest))
    refused = await _press(bot, digest, EntryAction.MUTE, "rollout")
    [answer] = await wait_for(lambda: bot.answers(refused))
    assert answer.response_type == "ephemeral"
    assert "Only admins of this channel can mute a tag" in all_text(answer)
    await _press(bot, digest, EntryAction.MUTE, "rollout", user=ADMIN)
    told = await wait_for(lambda: _thread(bot, digest), count=2)
    assert "muted tag rollout" in all_text(told[-1])
    assert await _marks(bot) == [("mute", "rollout"), ("snooze", REF)]


async def test_a_check_mark_reaction_marks_every_pr_of_that_message_read(bot: SlackBot) -> None:
    digest = await _digest(bot)
    event = {
        "type": "reaction_added",
        "user": USER,
        "reaction": "white_check_mark",
        "item": {"type": "message", "channel": CHANNEL, "ts": digest.ts},
        "item_user": "U0BOT",
        "event_ts": "1700000600.000100",
    }
    other = {**event, "reaction": "eyes"}
    await bot.post(event_body(other, f"Ev0R{next(_events)}"), content_type="application/json")
    response = await bot.post(
        event_body(event, f"Ev0R{next(_events)}"), content_type="application/json"
    )
    assert response.status_code == 200
    [told] = await wait_for(lambda: _thread(bot, digest))
    marks = await _marks(bot)
    assert len(marks) == 1 and marks[0][0] == "read", "max_items 1: one PR in the message"
    assert f"{marks[0][1]} read by" in all_text(told)


async def test_more_button_posts_the_next_page_and_slash_more_says_when_none_is_left(
    bot: SlackBot,
) -> None:
    digest = await _digest(bot)
    rest = "#7422" if "#7500" in all_text(digest) else "#7500"
    async with bot.service.ctx.engine.connect() as conn:
        run_id = (await conn.execute(select(digest_runs.c.id))).scalar_one()
    await _press(bot, digest, EntryAction.MORE, str(run_id))
    posts = await wait_for(lambda: channel_posts(bot.fake, CHANNEL), count=2)
    assert rest in all_text(posts[-1]) and posts[-1].thread_ts is None
    [answer] = await bot.command("more")
    assert "The latest digest has no more entries" in all_text(answer)


async def test_unread_lists_the_must_reads_shown_here_until_read(bot: SlackBot) -> None:
    digest = await _digest(bot)
    shown = "7500" if "#7500" in all_text(digest) else "7422"
    [listed] = await bot.command("unread")
    assert f"verl-project/verl#{shown}" in all_text(listed) and "7 days left" in all_text(listed)
    await _press(bot, digest, EntryAction.READ, f"verl-project/verl#{shown}")
    await wait_for(lambda: _thread(bot, digest))
    [after] = await bot.command("unread")
    assert "Nothing unread" in all_text(after)


async def test_full_report_opens_a_modal_with_the_whole_report(bot: SlackBot) -> None:
    digest = await _digest(bot)
    trigger = bot.fake.issue_trigger_id(USER)
    await _press(bot, digest, EntryAction.REPORT, REF, trigger_id=trigger)
    [view] = await _modals(bot)
    shown = json.dumps(view.current, ensure_ascii=False)
    assert "#7422" in view.current["title"]["text"] and "FP8 例外一并删除" in shown


def test_a_long_report_pages_within_a_modals_block_limit() -> None:
    item = StoredReport(parse_file(SEED).report, seq=1)
    block = {"type": "section", "text": {"type": "mrkdwn", "text": "x"}}
    messages = [RenderedMessage({"blocks": [block] * 45, "text": "x"}, "x") for _ in range(5)]
    first = report_view(item, messages, 0, Locale.EN)
    last = report_view(item, messages, 2, Locale.EN)
    assert len(first["blocks"]) <= 100 and len(last["blocks"]) <= 100
    assert first["blocks"][-1]["elements"][0]["value"] == "1", "Next page"
    assert last["blocks"][-1]["elements"][0]["text"] == "Page 3 of 3"
    assert sum(b == block for b in first["blocks"]) == PAGE_BLOCKS


async def _long_report_modal(bot: SlackBot) -> FakeView:
    """A report long enough for several modal pages, opened by its digest's Full report button."""
    seed = parse_file(SEED).report
    long = seed.model_copy(update={"number": 7600, "snippets": seed.snippets * 60})
    await bot.service.ctx.reports.upsert(long, source="test")
    digest = await _digest(bot)
    trigger = bot.fake.issue_trigger_id(USER)
    await _press(bot, digest, EntryAction.REPORT, "verl-project/verl#7600", trigger_id=trigger)
    [view] = await _modals(bot)
    return view


async def _modals(bot: SlackBot) -> list[FakeView]:
    """The modals open for USER, once there is one."""
    return await until(lambda: [v for v in bot.fake.views_for(USER) if v.type == "modal"], 10)


async def test_a_long_reports_modal_turns_to_its_next_page(bot: SlackBot) -> None:
    view = await _long_report_modal(bot)
    assert "Page 1 of" in json.dumps(view.current)
    inbound = bot.fake.interactions.block_actions(NEXT_PAGE, user=USER, view_id=view.id)
    assert (await bot.post(inbound.body)).status_code == 200
    await until(lambda: len(view.versions) > 1, 10)
    assert "Page 2 of" in json.dumps(view.current)
    assert len(view.current["blocks"]) <= 100


async def _logged(caplog: pytest.LogCaptureFixture, event: str, count: int) -> None:
    """Wait until `event` was logged `count` times (each press is answered after its ack)."""

    def logged() -> bool:
        return sum(r.getMessage() == event for r in caplog.records) >= count

    await until(logged, timeout=10, what=f"{event} was not logged {count} times")


async def test_forged_button_values_are_refused_and_nothing_is_stored(
    bot: SlackBot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="prdigest")
    digest = await _digest(bot)
    forged = [
        ("mute", "x" * 3000),  # Slack carries a value of up to 2,000 bytes, a client more
        ("more", "9" * 5000),
        ("more", "\u0661"),  # Arabic-Indic 1: int() reads it, a key is ASCII digits
        ("read", "../#1"),
    ]
    for action, value in forged:
        button = {
            "type": "button",
            "action_id": f"{ENTRY_ACTION_PREFIX}{action}",
            "text": {"type": "plain_text", "text": "x"},
            "value": f"{action}:{value}",
        }
        _, url = bot.response_url(user=ADMIN)
        assert (await bot.post(action_body(button, digest, url, user=ADMIN))).status_code == 200
    await _logged(caplog, "entry_action.refused", len(forged))
    assert await _marks(bot) == []
    async with bot.service.ctx.engine.connect() as conn:
        assert (await conn.execute(select(digest_runs.c.paged))).scalar_one() == 0
    assert channel_posts(bot.fake, CHANNEL) == [digest], "no page, no notice"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_forged_next_page_leaves_the_modal_as_it_is(
    bot: SlackBot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="prdigest")
    view = await _long_report_modal(bot)
    for page in ("9" * 5000, "\u0662"):  # 5,000 digits; Arabic-Indic 2
        inbound = bot.fake.interactions.block_actions(NEXT_PAGE, user=USER, view_id=view.id)
        payload = json.loads(parse_qs(inbound.body.decode())["payload"][0])
        payload["actions"][0]["value"] = page
        body = urlencode({"payload": json.dumps(payload)}).encode()
        assert (await bot.post(body)).status_code == 200
    await _logged(caplog, "slack.next_page_refused", 2)
    assert len(view.versions) == 1 and "Page 1 of" in json.dumps(view.current)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
