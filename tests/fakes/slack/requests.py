"""HTTP plumbing for the fake Slack: reading arguments the way Slack does, writing its answers."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from tests.fakes.slack.faults import Fault, FaultKind
from tests.fakes.slack.records import RecordedCall
from tests.fakes.slack.spec import JSON_CONTENT_TYPE, SlackRefusal

FORM_CONTENT_TYPES = frozenset({"application/x-www-form-urlencoded", "multipart/form-data"})
# Arguments a form post carries as JSON strings, with the error Slack gives when they don't parse.
JSON_STRING_PARAMS = {
    "blocks": "invalid_blocks_format",
    "attachments": "invalid_attachments",
    "metadata": "invalid_metadata_format",
    "view": "invalid_arguments",  # views.*: checked again (and worded) by the views module
}
SERVER_ERROR_PAGE = "<html><body><h1>{status}</h1><p>Slack is having trouble.</p></body></html>"


def channel_of(params: dict[str, Any]) -> str | None:
    channel = params.get("channel")
    return str(channel) if channel is not None else None


async def _read_body(request: web.Request) -> tuple[dict[str, Any], str, SlackRefusal | None]:
    if not request.body_exists:
        return {}, "none", None
    if request.content_type == JSON_CONTENT_TYPE:
        try:
            data = json.loads(await request.text())
        except ValueError:
            return {}, "json", SlackRefusal("invalid_json")
        if not isinstance(data, dict):
            return {}, "json", SlackRefusal("invalid_json")
        return data, "json", None
    if request.content_type in FORM_CONTENT_TYPES:
        form = await request.post()
        return (
            {name: value if isinstance(value, str) else "(file)" for name, value in form.items()},
            "form",
            None,
        )
    return {}, "other", SlackRefusal("invalid_form_data")


async def read_params(request: web.Request) -> tuple[dict[str, Any], str, SlackRefusal | None]:
    """Query and body arguments merged (the body wins), JSON-string arguments decoded.

    Returns the params, how the body came ("none", "form", "json", "other") and the refusal
    the call has earned already, if any (the call is recorded before it is refused).
    """
    body, body_kind, problem = await _read_body(request)
    params: dict[str, Any] = {**request.query, **body}
    for name, error in JSON_STRING_PARAMS.items():
        value = params.get(name)
        if isinstance(value, str):
            try:
                params[name] = json.loads(value)
            except ValueError:
                problem = problem or SlackRefusal(error)
    return params, body_kind, problem


async def read_json_object(request: web.Request) -> tuple[dict[str, Any], SlackRefusal | None]:
    """A response_url body: one JSON object, as bolt's respond() sends it."""
    invalid = SlackRefusal("invalid_payload", status=400)
    if request.content_type != JSON_CONTENT_TYPE:
        return {}, invalid
    try:
        data = json.loads(await request.text())
    except ValueError:
        return {}, invalid
    return (data, None) if isinstance(data, dict) else ({}, invalid)


def fault_response(call: RecordedCall, fault: Fault) -> web.Response:
    call.status = fault.status
    if fault.kind is FaultKind.SERVER_ERROR:
        call.response = None
        page = SERVER_ERROR_PAGE.format(status=fault.status)
        return web.Response(status=fault.status, text=page, content_type=fault.content_type)
    if fault.kind is FaultKind.RATE_LIMITED:
        headers = {} if fault.retry_after is None else {"Retry-After": fault.retry_after}
        refusal = SlackRefusal("ratelimited", status=429, headers=headers)
    else:
        refusal = SlackRefusal(fault.error_code, status=fault.status, **fault.extra)
    return refusal_response(call, refusal)


def refusal_response(
    call: RecordedCall, refusal: SlackRefusal, plain: bool = False
) -> web.Response:
    """The refusal as JSON, or as the bare error name (response_url answers in plain text)."""
    call.status, call.response = refusal.status, refusal.body()
    if plain:
        return web.Response(status=refusal.status, text=refusal.error, headers=refusal.headers)
    return web.json_response(call.response, status=refusal.status, headers=refusal.headers)


def drop_connection(request: web.Request) -> web.Response:
    """Reset the TCP connection after accepting: the client gets no answer at all.

    aiohttp then fails to write the returned response and, seeing the closed transport, drops it
    quietly: no log noise, no exception in the test.
    """
    if request.transport is not None:
        request.transport.abort()
    return web.Response()
