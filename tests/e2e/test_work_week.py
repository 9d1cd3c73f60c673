"""A team's work week, as a new user sets it up and a person reads it.

The config (tests/kits/week.py) is a Slack channel with a workdays 09:00 daily of three
items, a Friday 17:00 weekly, a `now` route for rollout files and an urgent `now` route for
breaking changes, plus a Telegram group with a threaded daily; Asia/Shanghai, CN holidays,
quiet hours 22:00-08:00. The service runs in-process on a fake clock from the Friday evening
before (so the new channels' catch-up digests are behind them) to Friday 2026-12-11 night,
ticking and delivering every half hour while reports arrive. The week runs once; each test
checks one thing a reader would notice in what the fake Slack and fake Telegram received.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.core.reports.model import Report
from tests.fakes.slack.api import PostedMessage
from tests.fakes.telegram.api import SentMessage
from tests.kits.slack import channel_posts
from tests.kits.week import (
    GROUP,
    SLACK_CHANNEL,
    ZONE,
    Week,
    is_full,
    local,
    make_pr,
    press_slack,
    press_telegram,
    rehearse_daily,
    rollout_pr,
    routes_by_message,
    slack_entries,
    slack_values,
    team_week,
    tg_buttons,
)

pytestmark = pytest.mark.slow

STEP = timedelta(minutes=30)
START = local(4, 18, 0)  # the Friday before: the new channels catch up on an empty store
END = local(11, 23, 30)
PREVIEWED = local(9, 9, 0)  # Wednesday's daily: the only digest due in the channel then
ROUTE_NAMES = ("rl-daily", "rl-weekly", "rl-now", "rl-breaking", "tg-daily")
URGENT = ("rl-breaking",)
# What the sender adds to say where a message goes; the rest is the preview's payload.
ADDRESSING = {"channel", "chat_id", "thread_ts", "reply_parameters", "message_thread_id"}
POSTED_LINE = re.compile(r"(· posted \d\d:\d\d|已于 ?\d\d:\d\d ?推送)\s*$")
PR_REF = re.compile(r"#(\d{3,})")
SLACK_ENTRY_LINK = re.compile(r"\|#(\d+)>")
DAILY_BLOCK_BUDGET = 20
SLACK_MAX_BLOCKS = 50
SLACK_MAX_ACTIONS = 25
TELEGRAM_MAX_BUTTONS = 100


def _arrivals() -> dict[datetime, list[Report]]:
    """What the review pipeline stores during the week, by the tick it is stored before."""
    days = {
        local(7, 7, 0): [rollout_pr() for _ in range(13)] + [make_pr() for _ in range(4)],
        local(11, 16, 30): [make_pr(must_read=True)],
        local(8, 23, 0): [make_pr(tags=("breaking", "trainer"), must_read=True), rollout_pr()],
    }
    for day in range(7, 12):
        days.setdefault(local(day, 10, 30), []).extend(
            [make_pr(must_read=True), make_pr(), make_pr()]
        )
        days.setdefault(local(day, 14, 0), []).append(rollout_pr(must_read=False))
    return days


@dataclass
class Record:
    """What the two chats received over the week, and what the checks pressed and previewed."""

    slack: list[PostedMessage] = field(default_factory=list)
    telegram: list[SentMessage] = field(default_factory=list)
    routes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    preview: list[dict[str, Any]] = field(default_factory=list)
    previewed_sends: list[dict[str, Any]] = field(default_factory=list)
    slack_pressed: tuple[PostedMessage, list[PostedMessage]] | None = None
    telegram_pressed: tuple[SentMessage, list[SentMessage]] | None = None

    def slack_routes(self, message: PostedMessage) -> tuple[str, ...]:
        return self.routes.get(message.ts, ())

    def telegram_routes(self, message: SentMessage) -> tuple[str, ...]:
        return self.routes.get(str(message.message_id), ())


def _more_button(values: Sequence[str]) -> str | None:
    return next((value for value in values if value.startswith("more:")), None)


async def _press_mondays_more(week: Week, record: Record) -> None:
    """Press "+N more" under Monday's daily in both chats, as a reader would."""
    daily = [m for m in channel_posts(week.slack.fake, SLACK_CHANNEL) if _is_head(m)][-1]
    value = _more_button(slack_values(daily))
    assert value is not None, "Monday's daily of 3 items has a next page"
    record.slack_pressed = (daily, await press_slack(week, daily, value))
    summary = [m for m in week.telegram.sent_to(GROUP) if m.reply_to is None][-1]
    data = _more_button([b.get("callback_data", "") for b in tg_buttons(summary)])
    assert data is not None, "Monday's Telegram daily of 5 items has a next page"
    record.telegram_pressed = (summary, await press_telegram(week, summary, data))


async def _preview_then_tick(week: Week, record: Record, at: datetime) -> None:
    week.clock.now = at
    record.preview = await rehearse_daily(week, "rl-daily")
    before = len(week.slack.fake.calls("chat.postMessage"))
    await week.step_to(at)
    record.previewed_sends = [c.params for c in week.slack.fake.calls("chat.postMessage")[before:]]


async def _run_week(tmp_path: Path) -> Record:
    record = Record()
    arrivals = _arrivals()
    async with team_week(tmp_path, START) as week:
        at = START
        while at <= END:
            for report in arrivals.pop(at, []):
                await week.ingest(report)
            if at == PREVIEWED:
                await _preview_then_tick(week, record, at)
            else:
                await week.step_to(at)
            if at == local(7, 9, 0):
                await _press_mondays_more(week, record)
            at += STEP
        assert not arrivals, f"arrivals off the half-hour grid: {sorted(arrivals)}"
        record.slack = channel_posts(week.slack.fake, SLACK_CHANNEL)
        record.telegram = [m for m in week.telegram.sent_to(GROUP) if m.method == "sendMessage"]
        record.routes = await routes_by_message(week)
    return record


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Record:
    record = asyncio.run(_run_week(tmp_path_factory.mktemp("week")))
    print("\n" + "\n".join(_summary(record)))
    return record


# What a person sees ---------------------------------------------------------------------


def _is_head(message: PostedMessage) -> bool:
    """A digest's first message: it opens with the header block."""
    blocks = message.blocks or []
    return bool(blocks) and blocks[0].get("type") == "header"


def _head_text(message: PostedMessage) -> str:
    blocks = message.blocks or []
    return str(blocks[0]["text"]["text"]) if blocks else ""


def _at(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, ZONE)


def _days(record: Record) -> Iterator[date]:
    day = START.date()
    while day <= END.date():
        yield day
        day += timedelta(days=1)


def _summary(record: Record) -> list[str]:
    lines = ["day         slack msgs/blocks/buttons   telegram msgs/buttons"]
    for day in _days(record):
        slack = [m for m in record.slack if _at(m.time).date() == day]
        tg = [m for m in record.telegram if _at(m.time).date() == day]
        blocks = sum(len(m.blocks or []) for m in slack)
        buttons = sum(len(slack_values(m)) for m in slack)
        tg_count = sum(len(tg_buttons(m)) for m in tg)
        lines.append(
            f"{day:%a %m-%d}   {len(slack):>4} / {blocks:>4} / {buttons:>4}"
            f"            {len(tg):>4} / {tg_count:>4}"
        )
    return lines


def _daily_runs(record: Record) -> dict[date, list[PostedMessage]]:
    """The Slack daily's messages (every one its run posted), by day."""
    runs: dict[date, list[PostedMessage]] = {}
    for message in record.slack:
        if "rl-daily" in record.slack_routes(message):
            runs.setdefault(_at(message.time).date(), []).append(message)
    return runs


def _digest_messages(record: Record) -> list[PostedMessage]:
    """The Slack messages of scheduled digests (not a `now` route's own posts, not pages)."""
    scheduled = {"rl-daily", "rl-weekly"}
    return [m for m in record.slack if scheduled & set(record.slack_routes(m))]


# The checks -----------------------------------------------------------------------------


def test_the_week_posts_what_the_team_expects(week: Record) -> None:
    runs = _daily_runs(week)
    assert sorted(runs) == [local(day, 9).date() for day in range(7, 12)], "one daily a workday"
    weekly = [m for m in week.slack if "rl-weekly" in week.slack_routes(m)]
    assert weekly and {_at(m.time).strftime("%a %H:%M") for m in weekly} == {"Fri 17:00"}
    heads = [m for m in week.telegram if m.reply_to is None and week.telegram_routes(m)]
    assert len(heads) == 5, "the Telegram group's daily, once each workday"


def test_slack_messages_stay_within_blocks_and_buttons(week: Record) -> None:
    for message in week.slack:
        blocks = message.blocks or []
        assert len(blocks) <= SLACK_MAX_BLOCKS, message.ts
        for block in blocks:
            if block["type"] == "actions":
                assert len(block["elements"]) <= SLACK_MAX_ACTIONS, message.ts


def test_the_daily_of_three_stays_small(week: Record) -> None:
    for day, messages in _daily_runs(week).items():
        entries = [entry for m in messages for entry in slack_entries(m)]
        full = [entry for entry in entries if is_full(entry[1])]
        assert len(full) <= 3, f"{day}: {len(full)} full entries in a daily of max_items 3"
        assert len(entries) <= 3, f"{day}: one budget of 3 covers new and still-unread entries"
        blocks = sum(len(m.blocks or []) for m in messages)
        assert blocks < DAILY_BLOCK_BUDGET, f"{day}: the daily took {blocks} blocks"


def test_telegram_buttons_name_their_pr(week: Record) -> None:
    for message in week.telegram:
        buttons = tg_buttons(message)
        assert len(buttons) <= TELEGRAM_MAX_BUTTONS, message.message_id
        for button in buttons:
            if button.get("callback_data", "").startswith("more:"):
                continue  # "+N more": the next page, no PR of its own
            assert PR_REF.search(button["text"]), f"{button} names no PR"


def test_more_on_slack_posts_a_page_of_entries_the_digest_did_not_show(week: Record) -> None:
    assert week.slack_pressed is not None
    digest, page = week.slack_pressed
    shown_full = {number for number, text in slack_entries(digest) if is_full(text)}
    paged = {number for m in page for number, _ in slack_entries(m)}
    assert page and all(m.thread_ts is None for m in page), "the page goes to the channel"
    assert paged and not paged & shown_full, f"page {paged}, digest showed {shown_full}"


def test_a_slack_page_holds_the_dailys_max_items(week: Record) -> None:
    assert week.slack_pressed is not None
    page = week.slack_pressed[1]
    entries = [entry for m in page for entry in slack_entries(m)]
    assert len(entries) <= 3, f"a page of the daily (max_items 3) shows {len(entries)}"
    assert sum(len(m.blocks or []) for m in page) < DAILY_BLOCK_BUDGET


def test_more_on_telegram_posts_a_new_message(week: Record) -> None:
    assert week.telegram_pressed is not None
    summary, after = week.telegram_pressed
    pages = {m.message_id for m in after}
    parts = [m for m in week.telegram if m.reply_to == summary.message_id]
    shown = {
        ref for m in parts if m.message_id not in pages for ref in PR_REF.findall(m.plain_text)
    }
    paged = {ref for m in after for ref in PR_REF.findall(m.plain_text)}
    assert paged and not paged & shown, f"page {paged}, digest showed {shown}"


def test_no_digest_message_only_repeats_the_now_routes_posts(week: Record) -> None:
    for message in _digest_messages(week):
        entries = slack_entries(message)
        if entries:
            fresh = [text for _, text in entries if not POSTED_LINE.search(text)]
            assert fresh, f"{_at(message.time):%a %H:%M} shows only 'posted' lines"


def test_the_preview_is_what_the_daily_delivers(week: Record) -> None:
    assert week.preview and len(week.preview) == len(week.previewed_sends)
    for shown, sent in zip(week.preview, week.previewed_sends, strict=True):
        assert set(shown) & ADDRESSING == set()
        assert {key: sent.get(key) for key in shown} == shown


def test_quiet_hours_and_the_weekend_hold_everything_but_the_urgent_route(week: Record) -> None:
    posts = [(m.time, week.slack_routes(m)) for m in week.slack]
    posts += [(m.time, week.telegram_routes(m)) for m in week.telegram]
    urgent_at = []
    for stamp, routes in posts:
        at = _at(stamp)
        working = at.weekday() < 5 and 8 <= at.hour < 22
        if routes == URGENT:
            urgent_at.append(at)
        else:
            assert working, f"{routes or 'a page'} posted at {at:%a %H:%M}"
    assert [f"{at:%a %H:%M}" for at in urgent_at] == ["Tue 23:00"], "the breaking PR, at once"


def _heads(week: Record, pages: bool) -> list[str]:
    """The header line of every digest (or of every "+N more" page) in both chats."""
    heads = [
        _head_text(m) for m in week.slack if _is_head(m) and bool(week.slack_routes(m)) is not pages
    ]
    heads += [
        m.plain_text.splitlines()[0]
        for m in week.telegram
        if m.reply_to is None and bool(week.telegram_routes(m)) is not pages
    ]
    return heads


def test_digest_headers_name_the_repo_not_the_subscriptions(week: Record) -> None:
    heads = _heads(week, pages=False)
    assert heads
    for head in heads:
        assert not any(name in head for name in ROUTE_NAMES), head
        assert "verl-project/verl" in head, head


def test_page_headers_name_the_repo_not_the_subscriptions(week: Record) -> None:
    assert week.slack_pressed is not None and week.telegram_pressed is not None
    heads = [_head_text(m) for m in week.slack_pressed[1] if _is_head(m)]
    heads += [m.plain_text.splitlines()[0] for m in week.telegram_pressed[1]]
    assert heads
    for head in heads:
        assert not any(name in head for name in ROUTE_NAMES), head
