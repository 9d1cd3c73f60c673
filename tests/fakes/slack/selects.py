"""Option-holding Block Kit elements (selects, checkboxes, radio buttons) and input-only elements.

The subscribe modal is a multi-select of tags; Slack refuses more than 100 options, option text
over 75 characters, values over 150, and initial options that are not among the options, so the
fake does too (with Slack's json-pointer wording).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.fakes.slack.text_objects import (
    MAX_ACTION_ID,
    BlockErrors,
    check_text_object,
)

MAX_SELECT_OPTIONS = 100  # static selects: options, or option groups
MAX_CHOICE_OPTIONS = 10  # checkboxes and radio buttons
MAX_OPTION_TEXT = 75
MAX_OPTION_VALUE = 150
MAX_OPTION_DESCRIPTION = 75
MAX_PLACEHOLDER = 150
MAX_GROUP_LABEL = 75

SELECTS: Mapping[str, int] = {
    "static_select": MAX_SELECT_OPTIONS,
    "multi_static_select": MAX_SELECT_OPTIONS,
    "checkboxes": MAX_CHOICE_OPTIONS,
    "radio_buttons": MAX_CHOICE_OPTIONS,
}
# Only checkboxes and radio buttons may show mrkdwn options; selects show plain_text.
MRKDWN_OPTIONS = frozenset({"checkboxes", "radio_buttons"})
MULTI = frozenset({"multi_static_select", "checkboxes"})
# Elements that live only inside an `input` block.
INPUT_ONLY_ELEMENTS = frozenset(
    {
        "plain_text_input",
        "number_input",
        "email_text_input",
        "url_text_input",
        "rich_text_input",
        "file_input",
    }
)


def _option(errors: BlockErrors, option: object, pointer: str, plain_only: bool) -> str | None:
    """Check one option object; its value, when it has a valid one."""
    if not isinstance(option, dict):
        errors.fail("must be an option object", pointer)
        return None
    errors.check_keys(option, frozenset({"text", "value", "description", "url"}), pointer)
    check_text_object(errors, option.get("text"), f"{pointer}/text", MAX_OPTION_TEXT, plain_only)
    if "description" in option:
        where = f"{pointer}/description"
        check_text_object(errors, option["description"], where, MAX_OPTION_DESCRIPTION, plain_only)
    value = option.get("value")
    errors.check_length(value, MAX_OPTION_VALUE, f"{pointer}/value")
    return value if isinstance(value, str) else None


def _options(errors: BlockErrors, element: Mapping[str, Any], pointer: str, limit: int) -> set[str]:
    """Every option (flat or in groups) checked; the set of their values."""
    plain_only = element["type"] not in MRKDWN_OPTIONS
    groups = element.get("option_groups")
    if "options" in element and groups is not None:
        errors.fail("must provide either options or option_groups", pointer)
    listed: list[tuple[object, str]] = []
    if groups is not None:
        if not isinstance(groups, list) or not 1 <= len(groups) <= limit:
            errors.fail(f"must be a non-empty array of at most {limit} items", pointer)
            groups = groups if isinstance(groups, list) else []
        for index, group in enumerate(groups):
            where = f"{pointer}/option_groups/{index}"
            group = group if isinstance(group, dict) else {}
            check_text_object(errors, group.get("label"), f"{where}/label", MAX_GROUP_LABEL, True)
            options = group.get("options")
            listed += [(o, f"{where}/options/{i}") for i, o in enumerate(options or [])]
    else:
        options = element.get("options")
        if not isinstance(options, list) or not options:
            errors.fail("must be a non-empty array", f"{pointer}/options")
            options = []
        elif len(options) > limit:
            errors.fail(f"no more than {limit} items allowed", f"{pointer}/options")
        listed = [(option, f"{pointer}/options/{i}") for i, option in enumerate(options)]
    values = [_option(errors, option, where, plain_only) for option, where in listed]
    return {value for value in values if value is not None}


def _initial(
    errors: BlockErrors, element: Mapping[str, Any], pointer: str, values: set[str]
) -> None:
    """Initial choices must be among the options (Slack compares them whole; value is enough)."""
    key = "initial_options" if element["type"] in MULTI else "initial_option"
    if key not in element:
        return
    chosen = element[key] if key == "initial_options" else [element[key]]
    if not isinstance(chosen, list):
        errors.fail("must be an array", f"{pointer}/{key}")
        return
    for index, option in enumerate(chosen):
        value = option.get("value") if isinstance(option, dict) else None
        if value not in values:
            where = f"{pointer}/{key}/{index}" if key == "initial_options" else f"{pointer}/{key}"
            errors.fail("must match one of the provided options", where)


def check_select(errors: BlockErrors, element: Mapping[str, Any], pointer: str) -> None:
    """A static select, multi-select, checkbox group or radio group with its options."""
    if "action_id" in element:
        errors.check_length(element["action_id"], MAX_ACTION_ID, f"{pointer}/action_id")
    if "placeholder" in element:
        where = f"{pointer}/placeholder"
        check_text_object(errors, element["placeholder"], where, MAX_PLACEHOLDER, True)
    values = _options(errors, element, pointer, SELECTS[element["type"]])
    _initial(errors, element, pointer, values)
    most = element.get("max_selected_items")
    if most is not None and (not isinstance(most, int) or isinstance(most, bool) or most < 1):
        errors.fail("must be an integer of at least 1", f"{pointer}/max_selected_items")
