"""What a signed Slack body must look like before bolt reads it.

Bolt assumes Slack's shapes: a JSON array, string, number or `null` (as the body, or as a form
body's `payload`) makes it call `.get` on a list and answer 500; so does an `event` that is not
an object, or an `actions` list of numbers. A signed body comes from someone holding the
signing secret, but a 500 still makes Slack retry and tells a probe where the parser breaks:
any shape Slack never sends is a 400 here, with what was wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from slack_bolt.request.internals import parse_body

# Fields bolt and the listeners read as an object, as an object or an id, or as a list of
# objects; anything else in them is not a Slack payload.
OBJECT_FIELDS = ("event", "container", "view", "message", "state", "bot_profile")
OBJECT_OR_ID_FIELDS = ("team", "user", "channel", "enterprise")
LIST_OF_OBJECTS_FIELDS = ("actions", "authorizations")
SCALAR_FIELDS = ("type", "command", "text", "event_id", "response_url", "trigger_id")
EVENT_ID_FIELDS = ("user", "channel", "team", "text", "ts", "thread_ts", "type")


class MalformedPayloadError(ValueError):
    """A signed body that is not a Slack payload; the message says what is wrong."""


def _check_object(payload: Mapping[str, Any], where: str) -> None:
    for name in OBJECT_FIELDS:
        if payload.get(name) is not None and not isinstance(payload[name], dict):
            raise MalformedPayloadError(f"{where}{name} is not an object")
    for name in OBJECT_OR_ID_FIELDS:
        value = payload.get(name)
        if value is not None and not isinstance(value, str | dict):
            raise MalformedPayloadError(f"{where}{name} is neither an id nor an object")
        if isinstance(value, dict) and not isinstance(value.get("id", ""), str):
            raise MalformedPayloadError(f"{where}{name}.id is not a string")
    for name in LIST_OF_OBJECTS_FIELDS:
        value = payload.get(name)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise MalformedPayloadError(f"{where}{name} is not a list of objects")
    for name in SCALAR_FIELDS:
        value = payload.get(name)
        if value is not None and not isinstance(value, str | int | float | bool):
            raise MalformedPayloadError(f"{where}{name} is not a plain value")


def check_payload(payload: object) -> None:
    """Raise MalformedPayloadError unless `payload` (bolt's parsed body) has Slack's shape."""
    if not isinstance(payload, dict):
        raise MalformedPayloadError(f"the body is a JSON {type(payload).__name__}, not an object")
    _check_object(payload, "")
    event = payload.get("event")
    if isinstance(event, dict):
        _check_object(event, "event.")
        for name in EVENT_ID_FIELDS:
            value = event.get(name)
            if value is not None and not isinstance(value, str | dict):
                raise MalformedPayloadError(f"event.{name} is neither text nor an object")
    for index, item in enumerate(payload.get("authorizations") or []):
        _check_object(item, f"authorizations[{index}].")


def read_payload(body: bytes, content_type: str | None) -> dict[str, Any]:
    """The body as bolt will parse it (JSON, a form, or a form's `payload` JSON), checked;
    MalformedPayloadError when it is not a Slack payload."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedPayloadError("the body is not UTF-8") from None
    media_type = (content_type or "").split(";")[0].strip() or None
    try:
        payload: object = parse_body(text, media_type)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError; nesting past the stack
        raise MalformedPayloadError(f"the body is not valid JSON ({type(exc).__name__})") from None
    check_payload(payload)
    assert isinstance(payload, dict)
    return payload
