"""What `/pr REF risks` shows: each fact once."""

from __future__ import annotations

import pytest

from bot.core.digest.select import StoredReport
from bot.core.models import Format, Locale, Section
from bot.core.render.labels import labels
from bot.core.render.renderer import Renderer
from bot.core.reports.parse.parser import parse_file
from tests.kits.paths import SEED


@pytest.mark.parametrize("fmt", list(Format))
@pytest.mark.parametrize("locale", list(Locale))
def test_the_risks_section_states_the_impact_level_once(fmt: Format, locale: Locale) -> None:
    report = parse_file(SEED).report
    assert "影响程度：中" in report.impact, "the seed's impact text names the level itself"
    messages = Renderer().section(StoredReport(report, 1), Section.RISKS, fmt, locale)
    shown = "\n".join(m.text for m in messages)
    assert shown.count("影响程度") + shown.lower().count("impact level") == 1, shown
    assert labels(locale)["impact_level"] in shown
