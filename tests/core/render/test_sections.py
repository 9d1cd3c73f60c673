"""What `/pr REF SECTION` shows: each fact once, and links where a digest entry links."""

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


@pytest.mark.parametrize("fmt", [Format.SLACK, Format.TELEGRAM])
def test_a_pr_answer_links_the_pr_on_github_and_the_full_report(fmt: Format) -> None:
    report = parse_file(SEED).report
    messages = Renderer().section(StoredReport(report, 1), Section.SUMMARY, fmt, Locale.ZH)
    shown = str([m.payload for m in messages])
    github = "https://github.com/verl-project/verl/pull/7422"
    assert report.url is not None and report.url != github
    links = {github: shown.count(github), report.url: shown.count(report.url)}
    assert all(n >= 1 for n in links.values()), links
    assert ("<" + github) in shown or f'href="{github}"' in shown, "a link, not plain text"


def test_a_report_whose_url_is_the_pr_links_it_once() -> None:
    report = parse_file(SEED).report.model_copy(
        update={"url": "https://github.com/verl-project/verl/pull/7422"}
    )
    messages = Renderer().section(StoredReport(report, 1), Section.SUMMARY, Format.TEXT, Locale.EN)
    shown = "\n".join(m.text for m in messages)
    assert shown.count("https://github.com/verl-project/verl/pull/7422") == 1
