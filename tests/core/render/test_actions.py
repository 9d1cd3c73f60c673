"""A pressed button's value is checked once, where it is parsed, for both platforms: only what
a button of ours carries comes through (a forged or garbled value is refused with a log line,
never a traceback further on)."""

from __future__ import annotations

import logging

import pytest

from bot.core.render.actions import (
    KEY_MAX,
    TAG_MAX,
    EntryAction,
    action_data,
    page_number,
    parse_action,
)

ARABIC_INDIC_ONE = "\u0661"  # ١: str.isdigit() says yes, int() reads 1


@pytest.mark.parametrize(
    ("data", "parsed"),
    [
        ("read:verl-project/verl#7422", (EntryAction.READ, "verl-project/verl#7422")),
        ("snooze:7422", (EntryAction.SNOOZE, "7422")),
        ("report:a/b#1", (EntryAction.REPORT, "a/b#1")),
        ("mute:rollout", (EntryAction.MUTE, "rollout")),
        ("mute:权重 更新", (EntryAction.MUTE, "权重 更新")),
        ("more:42", (EntryAction.MORE, "42")),
        (f"more:{KEY_MAX}", (EntryAction.MORE, str(KEY_MAX))),
        (action_data(EntryAction.MUTE, "t" * TAG_MAX), (EntryAction.MUTE, "t" * TAG_MAX)),
    ],
)
def test_what_our_buttons_carry_reads_back(data: str, parsed: tuple[EntryAction, str]) -> None:
    assert parse_action(data) == parsed


@pytest.mark.parametrize(
    "data",
    [
        "more:" + "9" * 5000,
        f"more:{KEY_MAX + 1}",
        "more:0",
        f"more:{ARABIC_INDIC_ONE}",
        "more:-1",
        "more: 7",
        "more:",
        "mute:" + "x" * 3000,
        "mute:" + "x" * (TAG_MAX + 1),
        "mute:   ",
        "read:" + "7" * 5000,
        "read:2147483648",
        "read:0",
        f"read:{ARABIC_INDIC_ONE}",
        "read:verl-project/verl#7422 ",
        "read:https://github.com/verl-project/verl/pull/7422",
        "snooze:../../etc#1",
        "report:" + "a" * 300 + "/b#1",
        "report:",
        "nope:1",
        "read",
    ],
)
def test_a_forged_value_is_refused(data: str) -> None:
    assert parse_action(data) is None


def test_a_refusal_is_logged_with_what_was_wrong(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="prdigest.actions")
    assert parse_action("mute:" + "x" * 3000) is None
    [record] = [r for r in caplog.records if r.getMessage() == "entry_action.refused"]
    fields = record.fields  # type: ignore[attr-defined]
    assert fields["action"] == "mute" and fields["length"] == 3000
    assert fields["problem"] == f"a tag longer than {TAG_MAX} characters"
    assert len(fields["value"]) <= 40


@pytest.mark.parametrize(
    ("value", "page"),
    [("0", 0), ("1", 1), ("12", 12), ("9" * 5000, None), (ARABIC_INDIC_ONE, None), ("", None),
     ("-1", None), ("1.0", None)],
)  # fmt: skip
def test_a_next_page_value_is_a_short_run_of_ascii_digits(value: str, page: int | None) -> None:
    assert page_number(value) == page
