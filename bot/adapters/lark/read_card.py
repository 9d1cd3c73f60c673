"""A digest card as posted, with who read which PR: the card a ✅ Read press updates.

Each read entry's ✅ Read button goes and its text ends in its mark ("✅ alice, bob"): an entry
is a div followed by an action row holding Read, 📄 Full report and ⋯ (Read leaves the row,
the others stay), or, one line each, a div whose `extra` is Read. Where the marks would pass
the card's size budget, only the buttons go.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from bot.chat.read_marks import ReadShape, read_elements
from bot.core.render.actions import EntryAction
from bot.core.render.lark import DATA_KEY, card_bytes, escape_lark_md
from bot.core.render.limits.lark import LARK_CARD_BUDGET_BYTES

READ_PREFIX = EntryAction.READ.value + ":"
Element = dict[str, Any]


def read_ref(element: object) -> str | None:
    """The REF a ✅ Read button carries; None for any other element."""
    if not isinstance(element, Mapping) or element.get("tag") != "button":
        return None
    value = element.get("value")
    data = value.get(DATA_KEY) if isinstance(value, Mapping) else None
    if not isinstance(data, str) or not data.startswith(READ_PREFIX):
        return None
    return data.removeprefix(READ_PREFIX)


def read_marks(readers: Mapping[str, Sequence[str]], mark: str) -> dict[str, str]:
    """Each read PR's mark: the label ("✅ {names}") with its readers, as inert lark_md."""
    return {
        key: escape_lark_md(mark.format(names=", ".join(names)))
        for key, names in readers.items()
        if names
    }


def _marked(div: Element, mark: str, separator: str) -> Element:
    text = div.get("text")
    if div.get("tag") != "div" or not isinstance(text, Mapping):
        return div
    return {**div, "text": {**text, "content": f"{text.get('content', '')}{separator}{mark}"}}


LARK_READ = ReadShape("extra", "tag", "action", "actions", read_ref, _marked)


def read_card(
    card: Mapping[str, Any], keys: Sequence[str], marks: Mapping[str, str]
) -> dict[str, Any]:
    """`card` with the read entries' Read buttons gone and their marks shown."""
    elements = copy.deepcopy(list(card.get("elements") or []))
    marked, plain = read_elements(elements, keys, marks, LARK_READ)
    shown = marked if card_bytes(marked) <= LARK_CARD_BUDGET_BYTES else plain
    return {**card, "elements": shown}
