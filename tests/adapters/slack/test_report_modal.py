"""The Full report modal in Slack, as a person reads it: the report's title once at the top,
each section under its own heading once, nothing repeated where a long section continues."""

from __future__ import annotations

import json
from typing import Any

from bot.adapters.slack.report_modal import show_report
from bot.core.digest.select import StoredReport
from bot.core.models import Format, Locale, Section
from bot.core.render.labels import labels
from bot.core.render.renderer import Renderer
from bot.core.reports.parse.parser import parse_file
from tests.kits.paths import SEED

RENDERER = Renderer()
SECTIONS = [
    "section_motivation",
    "section_impl",
    "section_files",
    "section_snippets",
    "section_comments",
    "section_risks",
    "section_related",
]


class _Views:
    """What show_report asks of Slack's client: the views it opened or updated, in order."""

    def __init__(self) -> None:
        self.shown: list[dict[str, Any]] = []

    async def views_open(self, *, trigger_id: str, view: dict[str, Any]) -> None:
        self.shown.append(view)

    async def views_update(self, *, view_id: Any, hash: Any, view: dict[str, Any]) -> None:
        self.shown.append(view)


async def _pages(item: StoredReport, locale: Locale = Locale.EN) -> list[list[dict[str, Any]]]:
    """Every page of the report's modal, turned with Next page as a reader would."""
    client = _Views()
    assert await show_report(client, RENDERER, item, locale, trigger_id="t")
    while "report_next_page" in json.dumps(client.shown[-1]["blocks"]):
        page = len(client.shown)
        view = {"id": "V1", "hash": "h"}
        assert await show_report(client, RENDERER, item, locale, view=view, page=page)
    return [view["blocks"] for view in client.shown]


def _texts(blocks: list[dict[str, Any]]) -> list[str]:
    return [str(block.get("text", {}).get("text", "")) for block in blocks]


def _heading_counts(blocks: list[dict[str, Any]], locale: Locale) -> dict[str, int]:
    L = labels(locale)
    texts = _texts(blocks)
    return {key: sum(f"▌{L[key]}" in text for text in texts) for key in SECTIONS}


async def test_the_sample_report_shows_its_title_once_and_each_section_heading_once() -> None:
    item = StoredReport(parse_file(SEED).report, seq=1)
    [blocks] = await _pages(item)
    assert [block["type"] for block in blocks].count("header") == 1
    assert blocks[0]["type"] == "header" and "#7422" in blocks[0]["text"]["text"]
    assert len(blocks) == 36, "43 when every section repeated the title and the PR line"
    assert [block["type"] for block in blocks].count("context") == 1, "the PR line, once"
    assert _heading_counts(blocks, Locale.EN) == dict.fromkeys(SECTIONS, 1)
    shown = json.dumps(blocks, ensure_ascii=False)
    assert "FP8 例外一并删除" in shown and "#7291" in shown, "the whole report"


async def test_a_long_section_continues_without_repeating_the_title_or_its_heading() -> None:
    seed = parse_file(SEED).report
    implementation = "\n\n".join([seed.implementation] * 40)
    item = StoredReport(seed.model_copy(update={"implementation": implementation}), seq=1)
    pages = await _pages(item, Locale.ZH)
    blocks = [block for page in pages for block in page]
    assert len(pages) > 1 and all(len(page) <= 100 for page in pages)
    assert [block["type"] for block in blocks].count("header") == 1
    assert _heading_counts(blocks, Locale.ZH) == dict.fromkeys(SECTIONS, 1)
    messages = RENDERER.section(item, Section.FULL, Format.SLACK, Locale.ZH)
    assert len(messages) > 1, "each message after the first opens with a repeated head"
    assert [block["type"] for block in blocks].count("context") == 1 + len(pages), (
        "the PR line once, and each page's page line; no repeated head"
    )
