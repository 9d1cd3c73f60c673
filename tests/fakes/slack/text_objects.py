"""Block Kit building blocks for the fake's checks: limits, text objects, the error collector.

Every check collects the text the blocks carry (`TextPiece`), so the message checks can count the
total and scan it for live mentions. Error messages follow Slack's own wording and json-pointers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_HEADER_TEXT = 150
MAX_FIELDS = 10
MAX_FIELD_TEXT = 2000
MAX_CONTEXT_ELEMENTS = 10
MAX_ACTIONS_ELEMENTS = 25
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_ACTION_ID = 255
MAX_BLOCK_ID = 255
MAX_URL = 3000
MAX_ALT_TEXT = 2000
MAX_MARKDOWN_BLOCK = 12000
MAX_INPUT_LABEL = 2000  # an input block's label and hint
MAX_TEXT_OBJECT = 3000  # where no smaller limit applies (context, confirm dialogs, options)

TEXT_TYPES = frozenset({"plain_text", "mrkdwn"})


@dataclass(frozen=True)
class TextPiece:
    """A piece of text a message carries, where it sits, and how Slack will parse it."""

    text: str
    pointer: str
    markup: bool = True  # `<!here>`, `<@U1>`, `<url|label>` are live (all but rich_text text)
    auto_parse: bool = False  # mrkdwn without verbatim=true: a bare `@here` is linked too
    counted: bool = True  # counts toward the ~12k total (rich_text stand-ins do not)


class BlockErrors:
    """Collects `invalid_blocks` messages and the text pieces found on the way."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.pieces: list[TextPiece] = []
        self.block_ids: set[str] = set()

    def fail(self, problem: str, pointer: str) -> None:
        self.messages.append(f"[ERROR] {problem} [json-pointer:{pointer}]")

    def check_length(self, value: object, limit: int, pointer: str, minimum: int = 1) -> None:
        if not isinstance(value, str):
            self.fail("must be a string", pointer)
        elif len(value) > limit:
            self.fail(f"must be less than {limit + 1} characters", pointer)
        elif len(value) < minimum:
            self.fail(f"must be more than {minimum - 1} characters", pointer)

    def check_keys(self, obj: Mapping[str, Any], allowed: frozenset[str], pointer: str) -> None:
        for key in sorted(set(obj) - allowed):
            self.fail(f"unknown property '{key}'", f"{pointer}/{key}")


def check_text_object(
    errors: BlockErrors, obj: object, pointer: str, limit: int, plain_only: bool = False
) -> None:
    """A composition text object: `{"type": "plain_text"|"mrkdwn", "text": ...}`."""
    if not isinstance(obj, dict):
        errors.fail("must be a text object", pointer)
        return
    kind = obj.get("type")
    if kind not in (("plain_text",) if plain_only else TEXT_TYPES):
        expected = "plain_text" if plain_only else "plain_text or mrkdwn"
        errors.fail(f"type must be {expected}", f"{pointer}/type")
        return
    errors.check_keys(obj, frozenset({"type", "text", "emoji", "verbatim"}), pointer)
    if "verbatim" in obj and kind != "mrkdwn":
        errors.fail("verbatim is only allowed on mrkdwn text", f"{pointer}/verbatim")
    if "emoji" in obj and kind != "plain_text":
        errors.fail("emoji is only allowed on plain_text", f"{pointer}/emoji")
    for flag in ("verbatim", "emoji"):
        if flag in obj and not isinstance(obj[flag], bool):
            errors.fail("must be a boolean", f"{pointer}/{flag}")
    text = obj.get("text")
    errors.check_length(text, limit, f"{pointer}/text")
    if isinstance(text, str):
        # plain_text shows markup literally, but nothing the bot sends may rely on that: its
        # `<...>` is scanned like mrkdwn's. Only mrkdwn without verbatim auto-links a bare @here.
        auto_parse = kind == "mrkdwn" and obj.get("verbatim") is not True
        errors.pieces.append(TextPiece(text, f"{pointer}/text", auto_parse=auto_parse))


def check_block_id(errors: BlockErrors, block: Mapping[str, Any], pointer: str) -> None:
    if "block_id" not in block:
        return
    block_id = block["block_id"]
    errors.check_length(block_id, MAX_BLOCK_ID, f"{pointer}/block_id")
    if isinstance(block_id, str):
        if block_id in errors.block_ids:
            errors.fail(f"duplicate block_id '{block_id}'", f"{pointer}/block_id")
        errors.block_ids.add(block_id)
