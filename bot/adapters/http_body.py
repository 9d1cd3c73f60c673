"""Reading an HTTP request's body within bounds, for every endpoint that takes one: the
platforms' webhooks (Slack's events, Telegram's updates) and the report API.

A body over its limit is refused as soon as it passes it (never read whole first), and the
rest is read and dropped up to DRAIN_MAX_BYTES so that the client reads the 413 rather than a
reset; a body that has not arrived whole within BODY_DEADLINE_SECONDS is a 408.
"""

from __future__ import annotations

import asyncio

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request

# A body must have arrived whole this long after the handler starts reading it: a client
# trickling a byte a second holds a connection for 10 s, not forever (408).
BODY_DEADLINE_SECONDS = 10.0
# A body over the limit is still read, and thrown away, up to this much more and within the
# body deadline, before the 413 goes out: clients that write the whole body before they read
# (urllib, requests) would otherwise see the connection reset instead of the answer.
DRAIN_MAX_BYTES = 64 * 1024 * 1024


class BodyTooLargeError(Exception):
    pass


async def drain(request: Request, already: int) -> None:
    """Read the rest of an oversized body and drop it, up to DRAIN_MAX_BYTES and the body
    deadline: a client that reads only after it has written all of it then gets its 413."""
    size = already
    try:
        async with asyncio.timeout(BODY_DEADLINE_SECONDS):
            async for chunk in request.stream():
                size += len(chunk)
                if size > DRAIN_MAX_BYTES:
                    return
    except (TimeoutError, ClientDisconnect):
        return


class BodyTimeoutError(HTTPException):
    """The body did not arrive within BODY_DEADLINE_SECONDS. An HTTPException, so every route
    that reads with `read_capped` answers 408 without catching it; `Connection: close` makes
    the server close the connection instead of waiting for the rest of the body (lingering,
    bot.web.lingering: a client still sending reads the 408, not a reset)."""

    def __init__(self) -> None:
        detail = f"request body not received within {BODY_DEADLINE_SECONDS:g} s"
        super().__init__(408, detail, headers={"Connection": "close"})


async def read_capped(request: Request, limit: int) -> bytes:
    """The body, refusing as soon as it passes `limit` (never read whole first), or when it
    has not arrived whole within BODY_DEADLINE_SECONDS (BodyTimeoutError: 408)."""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and len(declared) < 20 and int(declared) > limit:
        if int(declared) <= DRAIN_MAX_BYTES:
            await drain(request, 0)
        raise BodyTooLargeError
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(BODY_DEADLINE_SECONDS):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    break
                chunks.append(chunk)
    except TimeoutError:
        raise BodyTimeoutError from None
    if size > limit:
        await drain(request, size)
        raise BodyTooLargeError
    return b"".join(chunks)
