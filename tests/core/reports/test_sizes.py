"""Parsing is linear in the report: 4x the text costs about 4x the time, never 16x.

Timings are ratios (min of several repeats, 64 KB against 256 KB), so they hold on a loaded
machine; linear work gives about 4. The continuation case used to join every line onto the
text so far (quadratic: 16 and more).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.core.reports.parse.parser import parse_markdown
from tests.kits.sizes import WORST, continued_report, growth, markdown_of_size

pytestmark = pytest.mark.slow  # linear-time guards over large inputs: CI runs them (SLOW=1)

SMALL = 64 * 1024
REPEATS = 3
MAX_GROWTH = 6.0  # linear is 4; quadratic 16


def parse_of(build: Callable[[int], str]) -> Callable[[int], Callable[[], object]]:
    def make(n: int) -> Callable[[], object]:
        text = build(n)
        return lambda: parse_markdown(text)

    return make


@pytest.mark.parametrize("name", WORST)
def test_hostile_markdown_parses_in_linear_time(name: str) -> None:
    ratio = growth(parse_of(lambda n: markdown_of_size(name, n)), SMALL, REPEATS, MAX_GROWTH)
    assert ratio <= MAX_GROWTH, f"{name}: 4x the text cost {ratio:.1f}x the time"


def test_continuation_lines_parse_in_linear_time() -> None:
    report = parse_markdown(continued_report(1000)).report
    assert report.key_files[0].note.startswith("note more more")
    assert report.related[0].relation.startswith("r\nmore\nmore")
    ratio = growth(parse_of(continued_report), 4 * SMALL, REPEATS, MAX_GROWTH)
    assert ratio <= MAX_GROWTH, f"4x the continuation lines cost {ratio:.1f}x the time"
