"""Every Telegram payload of the golden files passes the Bot API's HTML rules, as the strict
fake reads them (tests/fakes/telegram/html.py: the tags the API lists, their attributes, and
its nesting rules: no entity inside `<code>`/`<pre>`, no `<code>` inside `<b>`/`<i>`…), and
the reply markup's button rules. The hostile reports go through the same checks in
test_render_safety (10,000 generated reports)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.core.render.limits.telegram import TELEGRAM_MAX_UTF16
from tests.fakes.telegram.html import utf16_len
from tests.fakes.telegram.messages import check_reply_markup, parse_text
from tests.kits.paths import ROOT

GOLDEN = ROOT / "tests" / "golden"
FILES = sorted(GOLDEN.rglob("*.telegram.json"))


def _payloads(data: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for item in data:
        if "messages" in item:  # a digest's parts, each with its messages
            yield from item["messages"]
        else:
            yield item


def test_the_golden_files_hold_telegram_payloads() -> None:
    assert len(FILES) >= 50
    assert sum(len(list(_payloads(json.loads(f.read_text())))) for f in FILES) >= 70


@pytest.mark.parametrize("path", FILES, ids=lambda path: str(path.relative_to(GOLDEN)))
def test_each_golden_payload_passes_the_bot_api_rules(path: Path) -> None:
    for payload in _payloads(json.loads(path.read_text(encoding="utf-8"))):
        assert payload.get("parse_mode", "HTML") == "HTML"
        plain, _ = parse_text(payload["text"], "HTML", None)  # raises BadRequest as the API
        assert utf16_len(plain) <= TELEGRAM_MAX_UTF16
        if "reply_markup" in payload:
            check_reply_markup(payload["reply_markup"])
