"""Telegram HTML as the Bot API takes it: a code span is never inside bold or italic (the API
refuses that nesting), and `/pr` answers set code spans as <code>, as the digest does."""

from __future__ import annotations

import re

from bot.core.digest.select import DigestFilter, StoredReport, build_digest
from bot.core.models import Format, Locale, Section
from bot.core.render.renderer import Renderer
from bot.core.reports.parse.parser import parse_file
from tests.fakes.telegram.messages import parse_text
from tests.kits.paths import SEED

RENDERER = Renderer()
STYLED_CODE = re.compile(r"<(b|i|u|s)>(?:(?!</\1>).)*<code>", re.DOTALL)


def test_an_italic_lead_leaves_its_code_spans_upright() -> None:
    seed = parse_file(SEED).report
    digest = build_digest([StoredReport(seed, 1)], DigestFilter(), "team")

    [message] = RENDERER.digest(digest, Format.TELEGRAM, Locale.ZH)

    html = message.payload["text"]
    assert "</i><code>load_format=dummy</code><i>" in html
    assert not STYLED_CODE.search(html)
    parse_text(html, "HTML", None)  # the strict fake refuses <code> inside <i>


def test_pr_answers_set_code_spans_as_code_not_backticks() -> None:
    seed = parse_file(SEED).report

    messages = RENDERER.section(seed, Section.FULL, Format.TELEGRAM, Locale.ZH)

    html = "\n".join(message.payload["text"] for message in messages)
    assert "<code>load_format=dummy</code>" in html
    assert "`load_format=dummy`" not in html
    for message in messages:
        parse_text(message.payload["text"], "HTML", None)
        assert not STYLED_CODE.search(message.payload["text"])
