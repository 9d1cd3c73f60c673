"""Feishu card JSON (1.0) as the fake checks it: the tags a card may hold, where each may sit,
its size and element count, and, stricter than Feishu, no mention and no link but http(s) in
lark_md (report text must never ping a group or link elsewhere)."""

from __future__ import annotations

import json
import re
from typing import Any

from bot.core.render.limits.lark import LARK_CARD_MAX_BYTES, LARK_CARD_MAX_ELEMENTS

CARD_KEYS = frozenset({"config", "header", "elements", "card_link", "i18n_elements"})
TOP_TAGS = frozenset({"div", "hr", "note", "action", "markdown", "column_set", "img"})
ACTION_TAGS = frozenset({"button", "overflow", "select_static", "date_picker"})
TEXT_TAGS = frozenset({"lark_md", "plain_text"})
_MD_LINK = re.compile(r"\[[^\[\]]*\]\(([^()]*)\)")


class CardError(ValueError):
    """What Feishu would refuse (code 230099, "Failed to create card content")."""


def _text(obj: Any, where: str, *, plain: bool = False) -> int:
    if not isinstance(obj, dict) or obj.get("tag") not in TEXT_TAGS:
        raise CardError(f"{where}: not a text object")
    if plain and obj["tag"] != "plain_text":
        raise CardError(f"{where}: must be plain_text")
    content = obj.get("content")
    if not isinstance(content, str) or not content:
        raise CardError(f"{where}: empty content")
    if obj["tag"] == "lark_md":
        if "<at" in content.lower():
            raise CardError(f"{where}: a mention in lark_md")
        for url in _MD_LINK.findall(content):
            if not url.startswith(("https://", "http://")):
                raise CardError(f"{where}: a link that is not http(s): {url[:40]!r}")
    return 1


def _interactive(obj: Any, where: str) -> int:
    tag = obj.get("tag") if isinstance(obj, dict) else None
    if tag not in ACTION_TAGS:
        raise CardError(f"{where}: {tag!r} may not sit in an action")
    if tag == "button":
        _text(obj.get("text"), f"{where}.text", plain=True)
        if not isinstance(obj.get("value", {}), dict):
            raise CardError(f"{where}.value: a button's value is an object")
    if tag == "overflow":
        options = obj.get("options")
        if not isinstance(options, list) or not options:
            raise CardError(f"{where}.options: none")
        for n, option in enumerate(options):
            _text(option.get("text"), f"{where}.options[{n}].text", plain=True)
            if not isinstance(option.get("value"), str):
                raise CardError(f"{where}.options[{n}].value: a string")
    return 1


def _element(obj: Any, where: str) -> int:
    tag = obj.get("tag") if isinstance(obj, dict) else None
    if tag not in TOP_TAGS:
        raise CardError(f"{where}: tag {tag!r} is not a card element")
    count = 1
    if tag == "div":
        count += _text(obj.get("text"), f"{where}.text")
        if "extra" in obj:
            count += _interactive(obj["extra"], f"{where}.extra")
    elif tag == "note":
        for n, inner in enumerate(obj.get("elements") or []):
            count += _text(inner, f"{where}.elements[{n}]")
    elif tag == "action":
        actions = obj.get("actions")
        if not isinstance(actions, list) or not actions:
            raise CardError(f"{where}.actions: none")
        count += sum(_interactive(a, f"{where}.actions[{n}]") for n, a in enumerate(actions))
    return count


def check_card(content: str) -> dict[str, Any]:
    """The card in a message's `content`, or CardError."""
    if len(content.encode()) > LARK_CARD_MAX_BYTES:
        raise CardError(f"the card is {len(content.encode())} bytes, over {LARK_CARD_MAX_BYTES}")
    card = json.loads(content)
    if not isinstance(card, dict) or not set(card) <= CARD_KEYS:
        raise CardError(f"unknown card keys: {sorted(set(card) - CARD_KEYS)}")
    if "header" in card:
        _text(card["header"].get("title"), "header.title", plain=True)
    elements = card.get("elements")
    if not isinstance(elements, list) or not elements:
        raise CardError("a card without elements")
    count = sum(_element(e, f"elements[{n}]") for n, e in enumerate(elements))
    if count > LARK_CARD_MAX_ELEMENTS:
        raise CardError(f"{count} elements, over {LARK_CARD_MAX_ELEMENTS}")
    return card
