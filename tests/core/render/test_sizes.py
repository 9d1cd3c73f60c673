"""Rendering is linear in the report: 4x the text costs about 4x the time, never 16x.

`/pr N full` of a report made of `&` or `<` used to cost quadratic time (0.12 s at 50 KB, 121 s
at 2 MB): the splitter re-rendered the whole rest of a paragraph for every message it cut.
Timings are ratios (min of several repeats, sizes large enough for noise not to dominate), so
they hold on a loaded machine; linear work gives about 4, the old splitter 8 to 16.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.core.models import Format, Locale, Section
from bot.core.render.renderer import Renderer
from bot.core.render.split import split_to_fit
from bot.core.reports.model import Report, Snippet
from tests.kits.safety import assert_safe
from tests.kits.sizes import GENERATORS, growth, long_report

pytestmark = pytest.mark.slow  # linear-time guards over large inputs: CI runs them (SLOW=1)

RENDERER = Renderer()
SMALL = 64 * 1024  # and 4x that: 256 KB
REPEATS = 3
# Linear is 4; the margin absorbs a loaded machine. Quadratic would be 16.
MAX_GROWTH = 6.0
RENDER_WORST = ("amp", "lt", "no_spaces", "cjk")


def render_section(name: str, fmt: Format) -> Callable[[int], Callable[[], object]]:
    def make(n: int) -> Callable[[], object]:
        report = long_report(GENERATORS[name](n))
        return lambda: RENDERER.section(report, Section.MOTIVATION, fmt, Locale.ZH)

    return make


@pytest.mark.parametrize("fmt", [Format.SLACK, Format.TELEGRAM])
@pytest.mark.parametrize("name", RENDER_WORST)
def test_a_long_paragraph_renders_in_linear_time(name: str, fmt: Format) -> None:
    ratio = growth(render_section(name, fmt), SMALL, REPEATS, MAX_GROWTH)
    assert ratio <= MAX_GROWTH, f"{name} {fmt.value}: 4x the text cost {ratio:.1f}x the time"


def test_splitting_calls_fits_on_pieces_not_on_the_rest_of_the_text() -> None:
    measured: list[int] = []

    def fits(text: str) -> bool:
        measured.append(len(text))
        return len(text.replace("&", "&amp;")) <= 3000

    text = "&" * 200_000
    pieces = split_to_fit(text, fits)
    assert "".join(pieces) == text
    assert max(measured) <= 2 * 600  # never the whole text, at most twice a piece
    assert sum(measured) <= 40 * len(text)


@pytest.mark.parametrize("fmt", [Format.SLACK, Format.TELEGRAM])
def test_a_snippet_whose_note_fills_a_message_still_renders_its_code(fmt: Format) -> None:
    # The frame (path, note) used to be cut to fit with an empty code text, leaving no room
    # for even one character of code: FitError on `/pr N full`.
    snippet = Snippet(path="a.py", note="&" * 20_000, language="python", code="&" * 20_000)
    report = Report(repo="o/r", number=1, title="t", snippets=[snippet])
    messages = RENDERER.section(report, Section.FULL, fmt, Locale.ZH)
    assert_safe(fmt, messages)
    assert sum(message.text.count("&") for message in messages) >= 20_000
