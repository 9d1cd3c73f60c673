"""What a message may carry: the content checks shared by chat.* methods and response_url posts."""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

from tests.fakes.slack.blocks import check_blocks
from tests.fakes.slack.mentions import Finding, scan
from tests.fakes.slack.spec import SlackRefusal
from tests.fakes.slack.text_objects import TextPiece

MAX_TEXT = 40_000  # top-level `text`; real Slack truncates beyond it, the fake refuses
MAX_MARKDOWN_TEXT = 12_000
# Undocumented: Slack refuses a message whose blocks carry about 12-13k characters of text in all.
MAX_TOTAL_BLOCK_TEXT = 12_000
MAX_ATTACHMENTS = 100
FORBIDDEN_PARAM = "fake_forbidden_param"
ATTACHMENT_TEXT_KEYS = ("fallback", "pretext", "title", "text", "footer", "author_name")
ATTACHMENT_URL_KEYS = ("title_link", "author_link", "author_icon", "image_url", "thumb_url")


@dataclass(frozen=True)
class MessageContent:
    """The accepted content of a message."""

    text: str | None
    blocks: list[Any] | None
    attachments: list[Any] | None
    markdown_text: str | None


def is_true(value: object) -> bool:
    """Slack's reading of a boolean argument, sent as JSON or as a form string."""
    return value is True or value in (1, "1", "true", "True", "TRUE")


def refuse_forbidden_params(params: Mapping[str, object]) -> None:
    """`link_names` and `parse=full` turn plain `@here` and names into live mentions."""
    if is_true(params.get("link_names")):
        raise SlackRefusal(FORBIDDEN_PARAM, "[ERROR] link_names=true can ping: never send it")
    if str(params.get("parse", "none")).lower() == "full":
        raise SlackRefusal(FORBIDDEN_PARAM, "[ERROR] parse=full can ping: never send it")


def _attachment_pieces(attachments: object) -> tuple[list[TextPiece], list[str]]:
    if not isinstance(attachments, list):
        raise SlackRefusal("invalid_attachments", "[ERROR] attachments must be an array")
    if len(attachments) > MAX_ATTACHMENTS:
        raise SlackRefusal("too_many_attachments")
    pieces: list[TextPiece] = []
    problems: list[str] = []
    for index, attachment in enumerate(attachments):
        where = f"/attachments/{index}"
        if not isinstance(attachment, dict):
            raise SlackRefusal("invalid_attachments", f"[ERROR] must be an object [{where}]")
        for key in ATTACHMENT_TEXT_KEYS:
            if isinstance(attachment.get(key), str):
                pieces.append(TextPiece(attachment[key], f"{where}/{key}"))
        for key in ATTACHMENT_URL_KEYS:
            if isinstance(attachment.get(key), str):
                pieces.append(TextPiece(f"<{attachment[key]}>", f"{where}/{key}", counted=False))
        for position, field in enumerate(attachment.get("fields") or []):
            for key in ("title", "value"):
                if isinstance(field, dict) and isinstance(field.get(key), str):
                    pieces.append(TextPiece(field[key], f"{where}/fields/{position}/{key}"))
        if "blocks" in attachment:
            checked = check_blocks(attachment["blocks"], f"{where}/blocks")
            pieces += checked.pieces
            problems += checked.messages
    return pieces, problems


def _refuse_with(error: str, findings: list[Finding], *messages: str) -> SlackRefusal:
    refusal = SlackRefusal(error, *messages)
    refusal.findings = findings
    return refusal


def check_message(params: Mapping[str, Any], allowed_users: Set[str]) -> MessageContent:
    """Accept the message's content or raise the refusal real Slack (or the house rules) gives."""
    refuse_forbidden_params(params)
    text, blocks = params.get("text"), params.get("blocks")
    attachments, markdown_text = params.get("attachments"), params.get("markdown_text")
    if markdown_text is not None and (text or blocks):
        raise SlackRefusal("markdown_text_conflict")
    if not (text or blocks or attachments or markdown_text):
        raise SlackRefusal("no_text")
    pieces: list[TextPiece] = []
    for name, value in (("text", text), ("markdown_text", markdown_text)):
        if value is not None:
            pieces.append(TextPiece(str(value), f"/{name}"))
    block_problems: list[str] = []
    total_block_text = 0
    if blocks is not None:
        checked = check_blocks(blocks)
        pieces += checked.pieces
        block_problems += checked.messages
        total_block_text = sum(len(piece.text) for piece in checked.pieces if piece.counted)
    if attachments is not None:
        attachment_pieces, attachment_problems = _attachment_pieces(attachments)
        pieces += attachment_pieces
        block_problems += attachment_problems
    findings = scan(pieces, allowed_users)
    if block_problems:
        raise _refuse_with("invalid_blocks", findings, *block_problems)
    if total_block_text > MAX_TOTAL_BLOCK_TEXT:
        raise _refuse_with("msg_blocks_too_long", findings)
    if len(str(text or "")) > MAX_TEXT or len(str(markdown_text or "")) > MAX_MARKDOWN_TEXT:
        raise _refuse_with("msg_too_long", findings)
    if findings:
        details = [f"[ERROR] {f.reason}: {f.token} [json-pointer:{f.pointer}]" for f in findings]
        raise _refuse_with(findings[0].error, findings, *details)
    return MessageContent(text, blocks, attachments, markdown_text)
