"""📄 Full report on Feishu: one card in the digest card's thread, flipped in place.

The card opens on the summary with a row of section buttons (摘要 · 动机 · 实现 · 文件 · 评论 ·
风险 · 关联) and, when a section is longer than one card, ‹ page/pages ›. A press answers the
callback with the same card at that section and page (Feishu replaces it in place), so the
whole report is read in one card, as Telegram's pager and Slack's modal show it.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from bot.chat.messages import StoredReport
from bot.core.models import Format, Locale, Section
from bot.core.render.flow import RenderedMessage
from bot.core.render.lark import DATA_KEY
from bot.core.render.limits.lark import LARK_VALUE_MAX
from bot.core.render.renderer import Renderer
from bot.core.render.report_tabs import (
    CURRENT_MARK,
    Shown,
    pager_rows,
    report_tabs,
    tab_pages,
)

TABS_PER_ROW: Final = 4  # a phone shows four short labels side by side


def _button(label: str, data: str, current: bool) -> dict[str, Any]:
    return {
        "tag": "button",
        "text": {"tag": "plain_text", "content": label},
        "type": "primary" if current else "default",
        "value": {DATA_KEY: data},
    }


def carried_ref(ref: str) -> str:
    """REF as the buttons carry it: whole when it fits a value, else its number alone."""
    return ref if len(ref.encode()) <= LARK_VALUE_MAX // 2 else ref.rpartition("#")[2]


def pager_card(
    renderer: Renderer, item: StoredReport, tab: Section, page: int, locale: Locale
) -> dict[str, Any]:
    """Page `page` of `tab` (the last one when `page` is past it), with the pager's rows."""
    pages = tab_pages(renderer, item, tab, Format.LARK, locale)
    page = min(page, len(pages) - 1)
    shown = Shown(tab, page, len(pages))
    rows = pager_rows(carried_ref(item.report.ref), report_tabs(item), shown, locale, TABS_PER_ROW)
    card = dict(pages[page].payload["card"])
    actions = [
        {"tag": "action", "actions": [_button(t, d, t.startswith(CURRENT_MARK)) for t, d in row]}
        for row in rows
    ]
    card["elements"] = [*card["elements"], *actions]
    return card


async def pager_message(
    renderer: Renderer, item: StoredReport, tab: Section, page: int, locale: Locale
) -> RenderedMessage:
    """The pager card as a message; rendered off the event loop (a huge report costs CPU)."""
    card = await asyncio.to_thread(pager_card, renderer, item, tab, page, locale)
    return RenderedMessage(payload={"card": card}, text=item.report.ref)
