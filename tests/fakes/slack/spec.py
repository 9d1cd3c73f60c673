"""Which Web API methods exist and which arguments each takes, from Slack's OpenAPI v2 spec.

The fake refuses what the spec does not allow: an unknown method, a parameter the operation does
not define, a required parameter left out. The spec is Slack's own (tests/specs/slack, 2021).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.kits.paths import SPECS

SPEC_PATH = SPECS / "slack" / "web-api-openapi-v2.json"

# Parameters real Slack accepts today that the 2021 spec predates. slack_sdk sends each of them only
# when the caller passes it, so allowing them lets through nothing real Slack would refuse.
EXTRA_PARAMS: Mapping[str, frozenset[str]] = {
    # `metadata` (message metadata, 2022): the outbox tags messages with it to find them again
    # after an ambiguous send. `markdown_text` (2025): the newer alternative to text/blocks.
    "chat.postMessage": frozenset({"metadata", "markdown_text"}),
    "chat.update": frozenset({"metadata", "markdown_text"}),
    "chat.postEphemeral": frozenset({"markdown_text"}),
    # Needed to read the metadata back when reconciling an ambiguous send.
    "conversations.history": frozenset({"include_all_metadata"}),
    "conversations.replies": frozenset({"include_all_metadata"}),
}

JSON_CONTENT_TYPE = "application/json"


class SlackRefusal(Exception):
    """An answer of `{"ok": false, "error": ...}` (or another status) that the fake sends back."""

    def __init__(
        self,
        error: str,
        *messages: str,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(error, *messages)
        self.error = error
        self.messages = list(messages)
        self.status = status
        self.headers = dict(headers or {})
        self.extra = extra
        self.findings: list[Any] = []  # mention/link findings, filled by the message checks

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"ok": False, "error": self.error, **self.extra}
        if self.messages:
            body["response_metadata"] = {"messages": self.messages}
        return body


@dataclass(frozen=True)
class Operation:
    """One Web API method as the spec defines it."""

    method: str
    params: frozenset[str]
    required: frozenset[str]
    accepts_json: bool
    needs_token: bool
    extra_params: frozenset[str] = field(default_factory=frozenset)

    def check_arguments(self, params: Mapping[str, object]) -> None:
        """Refuse unknown or missing parameters the way Slack's argument checker words it."""
        allowed = self.params | self.extra_params
        unknown = sorted(name for name in params if name not in allowed)
        missing = sorted(name for name in self.required if name not in params)
        messages = [f"[ERROR] unknown parameter: {name}" for name in unknown]
        messages += [f"[ERROR] missing required parameter: {name}" for name in missing]
        if messages:
            raise SlackRefusal("invalid_arguments", *messages)


def _operation(method: str, operation: Mapping[str, Any]) -> Operation:
    declared = operation.get("parameters", [])
    names = frozenset(str(p["name"]) for p in declared)
    # `token` is checked by the auth step: it may come as the Authorization header instead.
    required = frozenset(
        str(p["name"]) for p in declared if p.get("required") and p["name"] != "token"
    )
    return Operation(
        method=method,
        params=names,
        required=required,
        accepts_json=JSON_CONTENT_TYPE in operation.get("consumes", []),
        needs_token="token" in names,
        extra_params=EXTRA_PARAMS.get(method, frozenset()),
    )


@functools.cache
def load_operations(spec_path: Path = SPEC_PATH) -> Mapping[str, Operation]:
    """Every method of the spec by name (`chat.postMessage`), read once per process."""
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    operations: dict[str, Operation] = {}
    for path, verbs in spec["paths"].items():
        method = path.lstrip("/")
        for operation in verbs.values():
            operations[method] = _operation(method, operation)
    return operations
