"""The digest's "Full report" button in Slack: a modal with the whole report.

The report is rendered as `/pr REF full` renders it (Renderer.section): its title once at
the top, then each section under its own heading, once (a message that continues a section
opens with a repeated head, which the modal leaves out). Its blocks are cut into pages that
fit a modal (Slack shows at most 100 blocks in a view), and a
"Next page" button replaces the view with the next one (`views.update`, so any number of
pages fits, where `views.push` stops at three views).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any, Final

from slack_sdk.errors import SlackApiError

from bot.adapters.slack import errors
from bot.chat.messages import StoredReport
from bot.core.models import Format, Locale, Section
from bot.core.render.flow import RenderedMessage
from bot.core.render.labels import labels
from bot.core.render.limits.slack import (
    SLACK_SECTION_TEXT_MAX,
    SLACK_VIEW_BLOCKS_MAX,
    SLACK_VIEW_TITLE_MAX,
)
from bot.core.render.renderer import Renderer
from bot.logs import log

logger = logging.getLogger("prdigest.slack")

CALLBACK_ID: Final = "prdigest_report"
NEXT_PAGE: Final = "report_next_page"  # the "Next page" button's action_id
PAGE_BLOCKS: Final = SLACK_VIEW_BLOCKS_MAX - 2  # room for the page line and the "Next page" button


def report_blocks(messages: Sequence[RenderedMessage]) -> list[dict[str, Any]]:
    """The report's blocks, message after message, without the head a continuing message
    repeats (a context line); a message without blocks as one section."""
    blocks: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        found = message.payload.get("blocks")
        if isinstance(found, list) and found:
            repeated = index > 0 and found[0].get("type") == "context"
            shown = found[1:] if repeated else found
            blocks += [dict(block) for block in shown if block.get("type") != "actions"]
        else:
            text = str(message.payload.get("text", ""))[:SLACK_SECTION_TEXT_MAX]
            blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text}})
    return blocks


def _plain(text: str, limit: int) -> dict[str, Any]:
    return {"type": "plain_text", "text": text[:limit] or " "}


def report_view(
    item: StoredReport, messages: Sequence[RenderedMessage], page: int, locale: Locale
) -> dict[str, Any]:
    """Page `page` (from 0) of the report's modal."""
    L = labels(locale)
    blocks = report_blocks(messages)
    pages = max(1, -(-len(blocks) // PAGE_BLOCKS))
    page = min(max(page, 0), pages - 1)
    shown = blocks[page * PAGE_BLOCKS : (page + 1) * PAGE_BLOCKS]
    if pages > 1:
        line = L["report_page"].format(page=page + 1, pages=pages)
        shown.append({"type": "context", "elements": [_plain(line, SLACK_SECTION_TEXT_MAX)]})
    if page + 1 < pages:
        button = {
            "type": "button",
            "action_id": NEXT_PAGE,
            "text": _plain(L["report_next_page"], 75),
            "value": str(page + 1),
        }
        shown.append({"type": "actions", "elements": [button]})
    report = item.report
    title = f"#{report.number} {L['section_full']}"
    metadata = {"ref": f"{report.repo}#{report.number}", "locale": locale.value}
    return {
        "type": "modal",
        "callback_id": CALLBACK_ID,
        "title": _plain(title, SLACK_VIEW_TITLE_MAX),
        "close": _plain(L["report_close"], SLACK_VIEW_TITLE_MAX),
        "blocks": shown,
        "private_metadata": json.dumps(metadata),
    }


def view_metadata(view: dict[str, Any]) -> tuple[str, Locale]:
    """(REF, locale) of a report modal a "Next page" was pressed in."""
    try:
        data = json.loads(str(view.get("private_metadata", "")))
        return str(data["ref"]), Locale(data["locale"])
    except (ValueError, KeyError, TypeError):
        return "", Locale.EN


async def show_report(
    client: Any,
    renderer: Renderer,
    item: StoredReport,
    locale: Locale,
    *,
    trigger_id: str = "",
    view: dict[str, Any] | None = None,
    page: int = 0,
) -> bool:
    """Open the modal (with `trigger_id`) or turn the open `view` to `page`; False when
    Slack refused (an expired trigger, a view closed meanwhile)."""
    messages = renderer.section(item, Section.FULL, Format.SLACK, locale)
    shown = report_view(item, messages, page, locale)
    try:
        if view is None:
            await client.views_open(trigger_id=trigger_id, view=shown)
        else:
            await client.views_update(view_id=view.get("id"), hash=view.get("hash"), view=shown)
    except SlackApiError as exc:
        log(logger, "slack.report_modal_failed", logging.WARNING, reason=errors.reason(exc))
        return False
    return True
