"""A digest message as posted, with who read which PR: what a ✅ Read press edits it into.

Slack's blocks and Feishu's card elements hold an entry the same way: its text, then a row of
buttons with Read among them, or, one line each, the text with Read beside it. A read entry
loses its Read button and its text ends in its mark ("✅ alice, bob"). `ReadShape` names
where each platform keeps those pieces; the walk over them is `read_elements`, once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.chat.reading import key_of

Element = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ReadShape:
    """Where a platform's digest message keeps an entry's pieces."""

    beside: str  # the key of a one-line entry's own Read button ("accessory", "extra")
    kind: str  # the key naming an element's kind ("type", "tag")
    row: str  # the kind of a row of buttons ("actions", "action")
    buttons: str  # the key of that row's buttons ("elements", "actions")
    read_ref: Callable[[object], str | None]  # the REF a Read button carries, else None
    with_mark: Callable[[Element, str, str], Element]  # the entry's text, the mark after it


def read_elements(
    elements: Sequence[Element], keys: Sequence[str], marks: Mapping[str, str], shape: ReadShape
) -> tuple[list[Element], list[Element]]:
    """The elements with each read entry's Read button gone: with the marks (`marks`: PR key →
    its mark), and without them, for a message the marks would not fit."""
    marked: list[Element] = []
    plain: list[Element] = []
    for element in elements:
        beside = shape.read_ref(element.get(shape.beside))
        if beside is not None and (key := key_of(beside, keys)) in marks:
            rest = {name: value for name, value in element.items() if name != shape.beside}
            marked.append(shape.with_mark(rest, marks[str(key)], " · "))
            plain.append(rest)
            continue
        buttons = element.get(shape.buttons)
        if element.get(shape.kind) != shape.row or not isinstance(buttons, list):
            marked.append(element)
            plain.append(element)
            continue
        read = [b for b in buttons if (ref := shape.read_ref(b)) and key_of(ref, keys) in marks]
        kept = [button for button in buttons if button not in read]
        if read and marked:
            key = key_of(str(shape.read_ref(read[0])), keys)
            marked[-1] = shape.with_mark(marked[-1], marks[str(key)], "\n")
        if kept:
            marked.append({**element, shape.buttons: kept})
            plain.append({**element, shape.buttons: kept})
    return marked, plain
