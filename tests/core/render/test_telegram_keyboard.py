"""The keyboard under a Telegram digest: one row per entry (`#7422 ✅ Read`, `📄 #7422`,
`⋯ #7422`), every button naming its PR, at most 100 buttons a message even with an entry's
menu open, and callback_data within 64 bytes. The menu ⋯ opens (Snooze, Risks, Back, a Mute
per tag) names the PR on every button, and closing it gives back the keyboard as posted."""

from __future__ import annotations

from typing import Any

import pytest

from bot.core.digest.select import DigestFilter, StoredReport, build_digest
from bot.core.models import Format, Locale
from bot.core.render.actions import EntryAction, parse_action
from bot.core.render.labels import labels
from bot.core.render.limits.telegram import TELEGRAM_MAX_BUTTONS, TELEGRAM_MAX_CALLBACK_BYTES
from bot.core.render.renderer import Renderer
from bot.core.render.telegram import (
    TELEGRAM_MENU_BUTTONS,
    Rows,
    entry_menu,
    menu_closed,
    menu_is_open,
    menu_opened,
    parse_callback_data,
    pressed_label,
)
from bot.core.reports.model import ImpactLevel, RecommendationLevel, Report
from tests.kits.render import check_platform

RENDERER = Renderer()
NUMBERS = range(7401, 7411)  # ten PRs


def report(number: int, repo: str = "verl-project/verl", tags: list[str] | None = None) -> Report:
    return Report(
        repo=repo,
        number=number,
        title=f"[rollout] fix: change number {number}",
        url=f"https://github.com/{repo}/pull/{number}",
        summary=f"移除 dummy 格式覆盖 {number}",
        recommendation="值得精读。该 PR 展示了一个跨后端共有的配置契约。",
        recommendation_level=RecommendationLevel.MUST_READ,
        impact_level=ImpactLevel.MEDIUM,
        tags=tags if tags is not None else ["rollout", "fix"],
    )


def keyboards(reports: list[Report], locale: Locale = Locale.EN) -> list[tuple[str, Rows]]:
    """Each message of the digest of `reports`: its plain text and its keyboard's rows."""
    items = [StoredReport(r, seq) for seq, r in enumerate(reports, 1)]
    digest = build_digest(items, DigestFilter(), "team")
    messages = RENDERER.digest(digest, Format.TELEGRAM, locale)
    check_platform(Format.TELEGRAM, messages)
    return [(m.text, m.payload["reply_markup"]["inline_keyboard"]) for m in messages]


def number_of(row: list[dict[str, str]]) -> int:
    """The PR an entry's row is for, from its Read button's data."""
    parsed = parse_action(row[0]["callback_data"])
    assert parsed is not None and parsed[0] is EntryAction.READ
    return int(parsed[1].rpartition("#")[2])


def fits(button: dict[str, Any]) -> bool:
    return len(str(button["callback_data"]).encode()) <= TELEGRAM_MAX_CALLBACK_BYTES


@pytest.mark.parametrize("locale", list(Locale))
def test_ten_entries_are_ten_rows_and_every_button_names_its_pr(locale: Locale) -> None:
    shown = keyboards([report(n) for n in NUMBERS], locale)

    all_rows = [row for _, rows in shown for row in rows]
    assert len(all_rows) == len(NUMBERS), "one row per entry (no +N more: all ten are shown)"
    assert sum(len(row) for row in all_rows) == 3 * len(NUMBERS)
    for text, rows in shown:
        in_text = {n for n in NUMBERS if f"#{n}" in text}
        assert len(rows) == len(in_text), "as many rows as the message shows entries"
        assert sum(len(row) for row in rows) <= TELEGRAM_MAX_BUTTONS
        for row in rows:
            number = number_of(row)
            assert number in in_text
            assert [b["text"].replace(f"#{number}", "#N") for b in row][1:] == ["📄 #N", "⋯ #N"]
            assert all(f"#{number}" in button["text"] for button in row)
            assert all(fits(button) for button in row)
    assert sorted(number_of(row) for row in all_rows) == list(NUMBERS)


@pytest.mark.parametrize("locale", list(Locale))
def test_each_entrys_menu_names_its_pr_and_closing_it_restores_the_keyboard(
    locale: Locale,
) -> None:
    for _, rows in keyboards([report(n) for n in NUMBERS], locale):
        for row in rows:
            menu_data = row[2]["callback_data"]
            parsed = parse_action(menu_data)
            assert parsed is not None and parsed[0] is EntryAction.MENU
            label = pressed_label(rows, menu_data)
            assert label == f"#{number_of(row)}"
            menu = entry_menu(parsed[1], label, ["rollout", "fix"], labels(locale))

            opened = menu_opened(rows, menu_data, menu)

            at = opened.index(row)
            assert opened[at + 1 : at + 1 + len(menu)] == menu, "right under the entry's row"
            assert [len(r) for r in menu] == [3, 1, 1]  # Snooze, Risks, Back; a Mute per tag
            assert all(label in b["text"] and fits(b) for r in menu for b in r)
            assert sum(len(r) for r in opened) <= TELEGRAM_MAX_BUTTONS
            assert menu_is_open(opened, parsed[1]) and not menu_is_open(rows, parsed[1])
            assert parse_callback_data(menu[0][1]["callback_data"])[1] == parsed[1]
            assert menu_closed(opened) == rows


def test_opening_a_second_menu_closes_the_first() -> None:
    [(_, rows)] = keyboards([report(n) for n in NUMBERS[:3]])
    first, second = rows[0][2]["callback_data"], rows[1][2]["callback_data"]
    one = menu_opened(rows, first, entry_menu("7401", "#7401", ["rollout"], labels(Locale.EN)))

    two = menu_opened(one, second, entry_menu("7402", "#7402", ["rollout"], labels(Locale.EN)))

    assert not menu_is_open(two, "7401") and menu_is_open(two, "7402")
    assert len(two) == len(rows) + 2
    assert menu_closed(two) == rows


def test_every_message_keeps_room_for_an_open_menu() -> None:
    shown = keyboards([report(n) for n in range(1, 61)])

    assert len(shown) > 1
    for _, rows in shown:
        assert sum(len(row) for row in rows) <= TELEGRAM_MAX_BUTTONS - TELEGRAM_MENU_BUTTONS


def test_a_long_repo_or_tag_still_fits_64_bytes() -> None:
    long_repo = "an-organisation-with-a-long-name/and-a-rather-long-repository-name"
    [(_, [row])] = keyboards([report(7422, repo=long_repo, tags=["x" * 70, "rollout"])])
    assert [b["callback_data"] for b in row] == ["read:7422", "report:7422", "menu:7422"]

    menu = entry_menu(f"{long_repo}#7422", "#7422", ["x" * 70, "rollout"], labels(Locale.EN))

    assert [[b["callback_data"] for b in r] for r in menu] == [
        ["snooze:7422", "risks:7422", "back:7422"],
        ["mute:rollout"],  # a tag whose `mute:TAG` would pass 64 bytes gets no button
    ]


def test_closing_leaves_a_keyboard_without_a_menu_as_it_is() -> None:
    old = [
        [{"text": "#7422 ✅ Read", "callback_data": "read:7422"}],
        [
            {"text": "💤 7d", "callback_data": "snooze:7422"},
            {"text": "🔇", "callback_data": "mute:a"},
        ],
        [{"text": "🔇", "callback_data": "mute:b"}],
    ]

    assert menu_closed(old) == old
    assert pressed_label(old, "menu:7422") is None
