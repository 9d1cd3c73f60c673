"""Reading a Bot API request the way the real server does: query string and body merged; the
body form-urlencoded (what PTB sends), multipart (with files) or JSON; strings must be UTF-8."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl

from aiohttp import web

from tests.fakes.telegram.spec import FileUpload, bad_request


async def read_params(request: web.Request) -> dict[str, object]:
    """Query string and body, as the real API merges them; values stay strings until decoded."""
    params: dict[str, object] = dict(request.query)
    if not request.can_read_body:
        return params
    try:
        if request.content_type == "multipart/form-data":
            params.update(await _read_multipart(request))
        elif request.content_type == "application/json":
            params.update(_json_body(await request.read()))
        elif request.content_type == "application/x-www-form-urlencoded":
            text = (await request.read()).decode("ascii")
            params.update(parse_qsl(text, keep_blank_values=True, errors="strict"))
    except (UnicodeDecodeError, UnicodeEncodeError):
        raise bad_request("strings must be encoded in UTF-8") from None
    return params


def _json_body(body: bytes) -> dict[str, object]:
    try:
        decoded = json.loads(body.decode("utf-8")) if body.strip() else {}
    except json.JSONDecodeError:
        raise bad_request("can't parse JSON request body") from None
    if not isinstance(decoded, dict):
        raise bad_request("parameters must be a JSON object")
    _refuse_surrogates(decoded)
    return decoded


async def _read_multipart(request: web.Request) -> dict[str, object]:
    params: dict[str, object] = {}
    form = await request.post()
    for name, value in form.items():
        if isinstance(value, web.FileField):
            size = len(value.file.read())
            params[name] = FileUpload(value.filename, value.content_type, size)
        else:
            params[name] = value
    return params


def _refuse_surrogates(value: object) -> None:
    """JSON can smuggle lone surrogates (`"\\ud800"`); the real API refuses them."""
    if isinstance(value, str):
        value.encode("utf-8")
    elif isinstance(value, dict):
        for item in value.values():
            _refuse_surrogates(item)
    elif isinstance(value, list):
        for item in value:
            _refuse_surrogates(item)
