"""The "matched:" line of an entry a digest serving several subscriptions shows: at most three
names and a count of the rest, so any number of subscriptions (of any name length) renders
within every platform's limits."""

from __future__ import annotations

from typing import Any

import pytest

from bot.core.digest.select import DigestFilter, StoredReport, build_digest
from bot.core.models import Format, Layout, Locale, Verbosity
from bot.core.render.options import DigestOptions
from bot.core.render.renderer import Renderer
from bot.core.render.views import MATCHED_SHOWN, matched_names
from bot.core.reports.model import RecommendationLevel, Report
from tests.kits.render import check_platform

RENDERER = Renderer()


def report(**fields: Any) -> Report:
    base: dict[str, Any] = {
        "repo": "verl-project/verl",
        "number": 7422,
        "title": "[rollout] fix: preserve dummy load_format",
        "summary": "移除 dummy 格式覆盖",
        "recommendation": "值得精读。",
        "recommendation_level": RecommendationLevel.MUST_READ,
        "tags": ["rollout"],
    }
    return Report(**(base | fields))


def names(count: int, length: int) -> tuple[str, ...]:
    return tuple(f"s{i:03d}" + "x" * (length - 4) for i in range(count))


def test_at_most_three_names_then_a_count_of_the_rest() -> None:
    assert matched_names(("a", "b")) == "a, b"
    assert matched_names(("a", "b", "c")) == "a, b, c"
    assert matched_names(("a", "b", "c", "d", "e")) == "a, b, c +2"
    assert MATCHED_SHOWN == 3


@pytest.mark.parametrize("fmt", [Format.SLACK, Format.TELEGRAM, Format.TEXT])
@pytest.mark.parametrize("verbosity", list(Verbosity))
@pytest.mark.parametrize(("count", "length"), [(32, 100), (2000, 8), (3, 5000)])
def test_any_number_of_subscriptions_of_any_name_length_renders(
    fmt: Format, verbosity: Verbosity, count: int, length: int
) -> None:
    matched = names(count, length)
    items = [StoredReport(report(number=n), n) for n in (7422, 7458)]
    notes = {item.seq: (matched, "") for item in items}
    digest = build_digest(items, DigestFilter(), "team", notes)
    options = DigestOptions(layout=Layout.FLAT, verbosity=verbosity)

    messages = RENDERER.digest(digest, fmt, Locale.EN, options=options)

    shown = "\n".join(message.text for message in messages)
    assert "#7422" in shown and "#7458" in shown
    if count > MATCHED_SHOWN and verbosity is not Verbosity.ONELINE:  # one line: no "matched"
        assert f"+{count - MATCHED_SHOWN}" in shown
    assert all(name not in shown for name in matched[MATCHED_SHOWN:])
    check_platform(fmt, messages)


@pytest.mark.parametrize("fmt", [Format.SLACK, Format.TELEGRAM, Format.TEXT])
def test_an_entry_whose_every_line_is_huge_still_renders(fmt: Format) -> None:
    huge = "长" * 20_000
    points = "值得精读。\n" + "\n".join(f"{i}. {huge}" for i in range(1, 6))
    big = report(title=huge, summary=huge, recommendation=points, risk_flags=[huge], url="x" * 5000)
    notes = {1: (names(3, 5000), "14:02")}
    digest = build_digest([StoredReport(big, 1)], DigestFilter(), "team", notes)
    options = DigestOptions(layout=Layout.FLAT, verbosity=Verbosity.FULL)

    messages = RENDERER.digest(digest, fmt, Locale.ZH, options=options)

    assert messages
    check_platform(fmt, messages)
