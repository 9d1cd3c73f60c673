"""Fitting text to platform limits: measure, cut, split, and pack chunks into messages.

Everything here works on *plain* text before escaping and re-renders to measure, so a cut can
never land inside a tag, an entity or an escape sequence; Python strings are code points, so
it never lands inside a surrogate pair either, and `_safe_end` also keeps combining marks,
joiners and variation selectors with the character they belong to.
"""

from __future__ import annotations

import operator
import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from bot.core.record import record

ELLIPSIS = "…"
# The first length the prefix search tries; it doubles from there (see _longest_fitting_prefix).
GALLOP_START = 64

T = TypeVar("T")

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Characters that belong to the one before them: a cut must not separate them.
_JOINERS = frozenset("\u200d\u200c\u20e3") | frozenset(chr(c) for c in range(0xFE00, 0xFE10))
_SOFT_BREAKS = frozenset(" \t。，；！？、,;!?）)」』】")


class FitError(ValueError):
    """A chunk cannot fit a message even on its own (a bug in a renderer's budgets)."""


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, as Telegram counts it (an emoji outside the BMP is 2)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def scrub_surrogates(text: str) -> str:
    """Replace lone surrogates (possible in JSON input) with U+FFFD: no API accepts them."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)
    return text


def _joins_previous(char: str) -> bool:
    code = ord(char)
    return (
        char in _JOINERS
        or 0x1F3FB <= code <= 0x1F3FF  # skin tone modifiers
        or 0xE0020 <= code <= 0xE007F  # emoji tag sequences
        or unicodedata.combining(char) != 0
    )


def _safe_end(text: str, end: int, floor: int = 0) -> int:
    """Move `end` back (not below `floor`) so that text[:end] keeps every joiner/mark with its
    base character."""
    while floor < end < len(text) and (_joins_previous(text[end]) or text[end - 1] == "\u200d"):
        end -= 1
    return end


def _longest_fitting_prefix(
    text: str, fits: Callable[[str], bool], suffix: str, start: int = 0
) -> int:
    """The largest n with fits(text[start:start + n] + suffix); -1 when even n=0 fails.

    A galloping search: lengths 64, 128, 256… until one fails, then bisection between the last
    two. `fits` renders its argument, so each call costs about its length, and every call here
    is at most twice the answer: finding a piece costs O(piece · log piece), never O(rest of
    the text). That keeps splitting a 2 MB paragraph into 4 KB messages linear."""
    if not fits(suffix):
        return -1
    available = len(text) - start
    low, high = 0, min(GALLOP_START, available)
    while fits(text[start : start + high] + suffix):
        low = high
        if high == available:
            return high
        high = min(2 * high, available)
    high -= 1  # high itself failed
    while low < high:
        mid = (low + high + 1) // 2
        if fits(text[start : start + mid] + suffix):
            low = mid
        else:
            high = mid - 1
    return low


def cut_to_fit(text: str, fits: Callable[[str], bool]) -> str | None:
    """`text` itself if it fits, else its longest safe prefix + "…" that fits; None if even
    "…" alone does not. `fits` renders and measures, so escaping is accounted for."""
    whole = _longest_fitting_prefix(text, fits, "")
    if whole == len(text):
        return text
    end = _longest_fitting_prefix(text, fits, ELLIPSIS)
    if end < 0:
        return None
    return text[: _safe_end(text, end)].rstrip() + ELLIPSIS


def _break_point(text: str, start: int, end: int) -> int:
    """Where to split text[start:end]: after the last newline in its second half, else after
    the last space or CJK/Latin punctuation in its last quarter, else at `end` itself."""
    size = end - start
    newline = text.rfind("\n", start + size // 2, end)
    if newline > start:
        return newline + 1
    for index in range(end - 1, max(end - size // 4, start), -1):
        if text[index] in _SOFT_BREAKS:
            return index + 1
    return end


def _skip_newlines(text: str, start: int) -> int:
    while start < len(text) and text[start] == "\n":
        start += 1
    return start


def split_to_fit(text: str, fits: Callable[[str], bool]) -> list[str]:
    """Split `text` into consecutive pieces that each fit, preferring line and word breaks.

    Works by index (no copy of the rest of the text per piece), and each piece costs about its
    own size to find: linear in the text. Raises FitError if not even one character fits."""
    pieces: list[str] = []
    start = 0
    while start < len(text):
        size = _longest_fitting_prefix(text, fits, "", start)
        if size <= 0:
            raise FitError("not even one character fits the budget")
        if start + size == len(text):
            pieces.append(text[start:])
            break
        end = start + size
        cut = _break_point(text, start, end)
        end = cut if cut < end else end
        # keep joiners and marks with their base character, unless that leaves nothing
        safe = _safe_end(text, end, start)
        end = safe if safe > start else end
        pieces.append(text[start:end].rstrip("\n"))
        start = _skip_newlines(text, end)
    return [piece for piece in pieces if piece] or [""]


Cost = tuple[int, ...]


@record
class Piece(Generic[T]):
    """A rendered chunk, what it costs against each limit, and how it joins a message.

    `heading` is repeated at the top of a message this piece opens (a group's `[tag]` line,
    "(cont.)"); a `keep_with_next` piece (a heading) never ends a message on its own; a
    `tight` piece joins the one before with a line break rather than a blank line."""

    content: T
    cost: Cost
    heading: Piece[T] | None = None
    keep_with_next: bool = False
    tight: bool = False
    shows: int | None = None  # the seq of the report whose digest entry this is


# (map over operator functions: a digest packs hundreds of pieces, and generator frames cost
# more than the arithmetic; the costs of one platform are tuples of one length)
def _joined(used: Cost, separator: Cost, cost: Cost) -> Cost:
    return tuple(map(operator.add, map(operator.add, used, separator), cost))


def _within(cost: Cost, limit: Cost) -> bool:
    return all(map(operator.le, cost, limit))


def pack(pieces: Sequence[Piece[T]], limit: Cost, separator: Cost) -> list[list[Piece[T]]]:
    """Greedily pack pieces, in order, into messages whose total cost stays within `limit`.

    `separator` is what joining two pieces may cost at most. Pieces are never split here:
    renderers fit each one to a budget first."""
    messages: list[list[Piece[T]]] = []
    current: list[Piece[T]] = []
    used: Cost = tuple(0 for _ in limit)

    def flush() -> list[Piece[T]]:
        """Close the current message; trailing headings move on to the next one."""
        carried: list[Piece[T]] = []
        while current and current[-1].keep_with_next:
            carried.insert(0, current.pop())
        if current:
            messages.append(list(current))
        return carried

    for piece in pieces:
        added = _joined(used, separator, piece.cost) if current else piece.cost
        if _within(added, limit):
            current.append(piece)
            used = added
            continue
        carried = flush()
        heading = piece.heading
        repeat = heading is not None and not any(c is heading for c in carried)
        current = [heading, *carried, piece] if repeat and heading else [*carried, piece]
        used = current[0].cost
        for extra in current[1:]:
            used = _joined(used, separator, extra.cost)
        if not _within(used, limit):
            raise FitError(f"a chunk costing {used} does not fit a message limited to {limit}")
    flush()
    return messages
