"""response_url posts (bolt's respond()): 5 uses within 30 minutes, the same message checks.

Real Slack answers a response_url in plain text: `ok`, or the bare error name with a 4xx status.
Bot code should act on the status code.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.slack.messages import check_message, is_true, refuse_forbidden_params
from tests.fakes.slack.records import PostedMessage, ResponseUrl
from tests.fakes.slack.spec import SlackRefusal
from tests.fakes.slack.workspace import Workspace

USES = 5
LIFETIME_SECONDS = 30 * 60.0
BODY_KEYS = frozenset(
    {
        "text",
        "blocks",
        "attachments",
        "response_type",
        "replace_original",
        "delete_original",
        "thread_ts",
        "unfurl_links",
        "unfurl_media",
        "mrkdwn",
        "metadata",
        "link_names",  # known keys only so that they are refused as fake_forbidden_param
        "parse",
    }
)


def use_response_url(url: ResponseUrl | None, now: float) -> ResponseUrl:
    """Count one use of the URL, or refuse as Slack does once it is used up or expired."""
    if url is None:
        raise SlackRefusal("fake_unknown_response_url", status=404)
    if url.uses >= USES:
        raise SlackRefusal("used_url", status=404)
    if now - url.created > LIFETIME_SECONDS:
        raise SlackRefusal("expired_url", status=404)
    url.uses += 1
    return url


def post_response(workspace: Workspace, url: ResponseUrl, body: dict[str, Any]) -> PostedMessage:
    """Accept (and record) one response, or refuse it with HTTP 400 and the error name."""
    unknown = sorted(set(body) - BODY_KEYS)
    if unknown:
        raise SlackRefusal("invalid_payload", f"[ERROR] unknown key: {unknown[0]}", status=400)
    response_type = body.get("response_type", "ephemeral")
    if response_type not in ("ephemeral", "in_channel"):
        raise SlackRefusal("invalid_payload", "[ERROR] bad response_type", status=400)
    deleting = is_true(body.get("delete_original"))
    text, blocks, attachments = None, None, None
    if deleting:
        refuse_forbidden_params(body)
    else:
        content = check_message(body, workspace.allowed_mentions)
        text, blocks, attachments = content.text, content.blocks, content.attachments
    message = PostedMessage(
        method="response_url",
        channel=url.channel,
        ts=workspace.next_ts(),
        text=text,
        blocks=blocks,
        attachments=attachments,
        thread_ts=body.get("thread_ts"),
        user=url.user if response_type == "ephemeral" else None,
        metadata=body.get("metadata"),
        response_type=response_type,
        replace_original=is_true(body.get("replace_original")),
        delete_original=deleting,
        time=workspace.clock(),
        params=body,
    )
    workspace.posted.append(message)
    return message
