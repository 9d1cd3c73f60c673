"""Block Kit checks for messages and views: the limits real Slack enforces.

Only the block and element types a message (or a modal / Home tab: `input` blocks too) may carry
and this bot could send are known; any other type is refused, so a typo in a template fails here
instead of in a real workspace. Messages refuse as `invalid_blocks`, views as `invalid_arguments`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tests.fakes.slack.selects import INPUT_ONLY_ELEMENTS, SELECTS, check_select
from tests.fakes.slack.text_objects import (
    MAX_ACTION_ID,
    MAX_ACTIONS_ELEMENTS,
    MAX_ALT_TEXT,
    MAX_BLOCKS,
    MAX_BUTTON_TEXT,
    MAX_BUTTON_VALUE,
    MAX_CONTEXT_ELEMENTS,
    MAX_FIELD_TEXT,
    MAX_FIELDS,
    MAX_HEADER_TEXT,
    MAX_INPUT_LABEL,
    MAX_MARKDOWN_BLOCK,
    MAX_SECTION_TEXT,
    MAX_TEXT_OBJECT,
    MAX_URL,
    TEXT_TYPES,
    BlockErrors,
    TextPiece,
    check_block_id,
    check_text_object,
)

BLOCK_KEYS: Mapping[str, frozenset[str]] = {
    "section": frozenset({"type", "block_id", "text", "fields", "accessory", "expand"}),
    "header": frozenset({"type", "block_id", "text"}),
    "context": frozenset({"type", "block_id", "elements"}),
    "actions": frozenset({"type", "block_id", "elements"}),
    "divider": frozenset({"type", "block_id"}),
    "image": frozenset({"type", "block_id", "image_url", "slack_file", "alt_text", "title"}),
    "rich_text": frozenset({"type", "block_id", "elements"}),
    "markdown": frozenset({"type", "block_id", "text"}),
    "input": frozenset(
        {"type", "block_id", "label", "element", "dispatch_action", "hint", "optional"}
    ),
}
# Which block types each surface takes: `input` only in views, `markdown` only in messages.
SURFACE_BLOCKS: Mapping[str, frozenset[str]] = {
    "message": frozenset(BLOCK_KEYS) - {"input"},
    "modal": frozenset(BLOCK_KEYS) - {"markdown"},
    "home": frozenset(BLOCK_KEYS) - {"markdown"},
}
BUTTON_KEYS = frozenset(
    {"type", "text", "action_id", "url", "value", "style", "confirm", "accessibility_label"}
)
IMAGE_ELEMENT_KEYS = frozenset({"type", "image_url", "slack_file", "alt_text"})
# Interactive elements other than buttons: checked for action_id and the text objects they hold.
OTHER_ELEMENTS = frozenset(
    {
        "checkboxes",
        "datepicker",
        "datetimepicker",
        "overflow",
        "radio_buttons",
        "static_select",
        "external_select",
        "users_select",
        "conversations_select",
        "channels_select",
        "multi_static_select",
        "multi_external_select",
        "multi_users_select",
        "multi_conversations_select",
        "multi_channels_select",
        "timepicker",
        "workflow_button",
    }
)
RICH_TEXT_CONTAINERS = frozenset(
    {"rich_text_section", "rich_text_list", "rich_text_preformatted", "rich_text_quote"}
)
RICH_TEXT_INERT = frozenset({"channel", "emoji", "date", "color", "team"})


def _array(errors: BlockErrors, value: object, pointer: str, limit: int) -> list[Any]:
    if not isinstance(value, list) or not value:
        errors.fail("must be a non-empty array", pointer)
        return []
    if len(value) > limit:
        errors.fail(f"no more than {limit} items allowed", pointer)
    return value


def _link(errors: BlockErrors, url: object, pointer: str) -> None:
    """A URL the message makes clickable: length-checked, then scanned like `<url>` markup."""
    errors.check_length(url, MAX_URL, pointer)
    if isinstance(url, str):
        errors.pieces.append(TextPiece(f"<{url}>", pointer, counted=False))


def _nested_text_objects(errors: BlockErrors, value: object, pointer: str) -> None:
    if isinstance(value, dict):
        if value.get("type") in TEXT_TYPES and "text" in value:
            check_text_object(errors, value, pointer, MAX_TEXT_OBJECT)
            return
        for key, item in value.items():
            _nested_text_objects(errors, item, f"{pointer}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _nested_text_objects(errors, item, f"{pointer}/{index}")


def _button(errors: BlockErrors, button: Mapping[str, Any], pointer: str) -> None:
    errors.check_keys(button, BUTTON_KEYS, pointer)
    check_text_object(errors, button.get("text"), f"{pointer}/text", MAX_BUTTON_TEXT, True)
    if "action_id" in button:
        errors.check_length(button["action_id"], MAX_ACTION_ID, f"{pointer}/action_id")
    if "value" in button:
        errors.check_length(button["value"], MAX_BUTTON_VALUE, f"{pointer}/value")
    if "url" in button:
        _link(errors, button["url"], f"{pointer}/url")
    if button.get("style", "primary") not in ("primary", "danger"):
        errors.fail("style must be primary or danger", f"{pointer}/style")
    if "confirm" in button:
        _nested_text_objects(errors, button["confirm"], f"{pointer}/confirm")


def _image_element(errors: BlockErrors, image: Mapping[str, Any], pointer: str) -> None:
    errors.check_keys(image, IMAGE_ELEMENT_KEYS, pointer)
    errors.check_length(image.get("alt_text"), MAX_ALT_TEXT, f"{pointer}/alt_text")
    if "slack_file" not in image:
        _link(errors, image.get("image_url"), f"{pointer}/image_url")


def check_element(errors: BlockErrors, element: object, pointer: str, image_ok: bool) -> None:
    if not isinstance(element, dict) or not isinstance(element.get("type"), str):
        errors.fail("must be an element object with a type", pointer)
        return
    kind = element["type"]
    if kind == "button":
        _button(errors, element, pointer)
    elif kind == "image" and image_ok:
        _image_element(errors, element, pointer)
    elif kind in SELECTS:
        check_select(errors, element, pointer)
    elif kind in OTHER_ELEMENTS:
        if "action_id" in element:
            errors.check_length(element["action_id"], MAX_ACTION_ID, f"{pointer}/action_id")
        _nested_text_objects(errors, element, pointer)
    else:
        errors.fail(f"unsupported element type: {kind}", f"{pointer}/type")


def _section(errors: BlockErrors, block: Mapping[str, Any], pointer: str) -> None:
    if "text" not in block and "fields" not in block:
        errors.fail("must provide either text or fields", pointer)
    if "text" in block:
        check_text_object(errors, block["text"], f"{pointer}/text", MAX_SECTION_TEXT)
    if "fields" in block:
        fields = _array(errors, block["fields"], f"{pointer}/fields", MAX_FIELDS)
        for index, field in enumerate(fields):
            check_text_object(errors, field, f"{pointer}/fields/{index}", MAX_FIELD_TEXT)
    if "accessory" in block:
        check_element(errors, block["accessory"], f"{pointer}/accessory", image_ok=True)
    if not isinstance(block.get("expand", False), bool):
        errors.fail("must be a boolean", f"{pointer}/expand")


def _header(errors: BlockErrors, block: Mapping[str, Any], pointer: str) -> None:
    check_text_object(errors, block.get("text"), f"{pointer}/text", MAX_HEADER_TEXT, True)


def _context(errors: BlockErrors, block: Mapping[str, Any], pointer: str) -> None:
    elements = _array(errors, block.get("elements"), f"{pointer}/elements", MAX_CONTEXT_ELEMENTS)
    for index, element in enumerate(elements):
        where = f"{pointer}/elements/{index}"
        if isinstance(element, dict) and element.get("type") == "image":
            _image_element(errors, element, where)
        else:
            check_text_object(errors, element, where, MAX_TEXT_OBJECT)


def _actions(errors: BlockErrors, block: Mapping[str, Any], pointer: str) -> None:
    elements = _array(errors, block.get("elements"), f"{pointer}/elements", MAX_ACTIONS_ELEMENTS)
    for index, element in enumerate(elements):
        check_element(errors, element, f"{pointer}/elements/{index}", image_ok=False)


def _divider(errors: BlockErrors, block: Mapping[str, Any], pointer: str) -> None:
    """A divider has nothing to check beyond its keys and block_id."""


def _image(errors: BlockErrors, block: Mapping[str, Any], pointer: str) -> None:
    errors.check_length(block.get("alt_text"), MAX_ALT_TEXT, f"{pointer}/alt_text")
    if "slack_file" not in block:
        _link(errors, block.get("image_url"), f"{pointer}/image_url")
    if "title" in block:
        check_text_object(errors, block["title"], f"{pointer}/title", MAX_ALT_TEXT, True)


def _markdown(errors: BlockErrors, block: Mapping[str, Any], pointer: str) -> None:
    text = block.get("text")
    errors.check_length(text, MAX_MARKDOWN_BLOCK, f"{pointer}/text")
    if isinstance(text, str):
        errors.pieces.append(TextPiece(text, f"{pointer}/text"))


def _rich_text_leaf(errors: BlockErrors, leaf: Mapping[str, Any], pointer: str) -> None:
    """Rich text is literal; its live parts are elements, scanned as their markup equivalents."""
    kind = leaf.get("type")
    if kind == "text":
        errors.check_length(leaf.get("text"), MAX_SECTION_TEXT, f"{pointer}/text")
        errors.pieces.append(TextPiece(str(leaf.get("text", "")), pointer, markup=False))
    elif kind == "link":
        _link(errors, leaf.get("url"), f"{pointer}/url")
    elif kind == "broadcast":
        errors.pieces.append(TextPiece(f"<!{leaf.get('range')}>", pointer, counted=False))
    elif kind == "user":
        errors.pieces.append(TextPiece(f"<@{leaf.get('user_id')}>", pointer, counted=False))
    elif kind == "usergroup":
        stand_in = f"<!subteam^{leaf.get('usergroup_id')}>"
        errors.pieces.append(TextPiece(stand_in, pointer, counted=False))
    elif kind not in RICH_TEXT_INERT:
        errors.fail(f"unsupported rich text element: {kind}", f"{pointer}/type")


def _rich_text(errors: BlockErrors, block: Mapping[str, Any], pointer: str) -> None:
    parts = _array(errors, block.get("elements"), f"{pointer}/elements", MAX_BLOCKS)
    for index, part in enumerate(parts):
        where = f"{pointer}/elements/{index}"
        if not isinstance(part, dict) or part.get("type") not in RICH_TEXT_CONTAINERS:
            errors.fail("must be a rich text section, list, preformatted or quote", where)
            continue
        for position, leaf in enumerate(part.get("elements") or []):
            leaf_where = f"{where}/elements/{position}"
            if isinstance(leaf, dict) and leaf.get("type") == "rich_text_section":
                for deep, inner in enumerate(leaf.get("elements") or []):  # list items
                    _rich_text_leaf(errors, inner, f"{leaf_where}/elements/{deep}")
            elif isinstance(leaf, dict):
                _rich_text_leaf(errors, leaf, leaf_where)
            else:
                errors.fail("must be an object", leaf_where)


def _input(errors: BlockErrors, block: Mapping[str, Any], pointer: str) -> None:
    """A form field of a modal: a label, one input element, an optional hint."""
    check_text_object(errors, block.get("label"), f"{pointer}/label", MAX_INPUT_LABEL, True)
    if "hint" in block:
        check_text_object(errors, block["hint"], f"{pointer}/hint", MAX_INPUT_LABEL, True)
    for flag in ("optional", "dispatch_action"):
        if flag in block and not isinstance(block[flag], bool):
            errors.fail("must be a boolean", f"{pointer}/{flag}")
    element = block.get("element")
    where = f"{pointer}/element"
    if isinstance(element, dict) and element.get("type") in INPUT_ONLY_ELEMENTS:
        if "action_id" in element:
            errors.check_length(element["action_id"], MAX_ACTION_ID, f"{where}/action_id")
        _nested_text_objects(errors, element, where)
    elif isinstance(element, dict) and element.get("type") in ("button", "image", "overflow"):
        errors.fail(f"unsupported element type in an input block: {element['type']}", where)
    else:
        check_element(errors, element, where, image_ok=False)


BlockCheck = Callable[[BlockErrors, Mapping[str, Any], str], None]
BLOCK_CHECKS: Mapping[str, BlockCheck] = {
    "section": _section,
    "header": _header,
    "context": _context,
    "actions": _actions,
    "divider": _divider,
    "image": _image,
    "rich_text": _rich_text,
    "markdown": _markdown,
    "input": _input,
}


def check_blocks(
    blocks: object, pointer: str = "/blocks", *, surface: str = "message", limit: int = MAX_BLOCKS
) -> BlockErrors:
    """Check the `blocks` of a message (or of a `modal` / `home` view, up to `limit` blocks);
    the caller refuses when `messages` is not empty."""
    errors = BlockErrors()
    if blocks == []:
        return errors  # no blocks at all: the message stands on its text (or is `no_text`)
    allowed = SURFACE_BLOCKS[surface]
    for index, block in enumerate(_array(errors, blocks, pointer, limit)):
        where = f"{pointer}/{index}"
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            errors.fail("must be a block object with a type", where)
            continue
        kind = block["type"]
        if kind not in allowed:
            errors.fail(f"unsupported type: {kind}", f"{where}/type")
            continue
        errors.check_keys(block, BLOCK_KEYS[kind], where)
        check_block_id(errors, block, where)
        BLOCK_CHECKS[kind](errors, block, where)
    return errors
