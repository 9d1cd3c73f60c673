"""Feishu/Lark settings: the top-level `lark:` key, what a channel's target may be, and which
API a domain means (LARK_API_URL, for a fake or a proxy, goes before it)."""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

FEISHU_API_URL = "https://open.feishu.cn"  # China (飞书)
LARK_SUITE_API_URL = "https://open.larksuite.com"  # everywhere else (Lark)
# A group chat (`oc_…`) or a user's open_id (`ou_…`): the ids the message API takes.
LARK_TARGET = re.compile(r"o[cu]_[A-Za-z0-9]{6,64}")
# An app id as the developer console shows it (`cli_a1b2c3d4e5f6a7b8`).
LARK_APP_ID_SHAPE = re.compile(r"cli_[a-z0-9]{8,32}")


class LarkDomain(StrEnum):
    FEISHU = "feishu"
    LARK = "lark"


class LarkReceive(StrEnum):
    """How events reach the bot: the SDK's long connection (no public URL needed), or HTTP
    callbacks at POST /lark/events."""

    SOCKET = "socket"
    WEBHOOK = "webhook"


class LarkConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    domain: LarkDomain = LarkDomain.FEISHU
    # open_ids who may change every group's subscriptions, besides each group's owner and managers
    admins: list[str] = Field(default_factory=list)
    receive: LarkReceive = LarkReceive.SOCKET


def api_url(domain: LarkDomain, override: str | None) -> str:
    """LARK_API_URL when set, else the domain's Open API."""
    if override:
        return override
    return FEISHU_API_URL if domain is LarkDomain.FEISHU else LARK_SUITE_API_URL


def target_problem(target: str) -> str | None:
    """Why `target` is not a Feishu chat or user id; None when it is one."""
    if LARK_TARGET.fullmatch(target):
        return None
    return f"target {target!r} is not a Feishu group (oc_…) or user open_id (ou_…)"
