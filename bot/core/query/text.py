"""The one text normalization of queries and indexes: what a word is compared as.

NFKC folds full-width forms (`ＦＰ８` is `fp8`) and compatibility characters, casefold lowers
Latin, Greek and the rest; whitespace runs become one space so a phrase matches across line
breaks.

Where a match may start and end: a word character is a letter, a digit or `_` (Python's
`\\w`, as in `grep -w` and an editor's whole-word search), but for Chinese, Japanese and
Korean characters. A query's edge that is a word character must meet a non-word character
(or the text's end) in the text: `ci` is found in "CI" and "ci:", never in "specific", and
`roll*` asks only the start. Chinese, Japanese and Korean are compared character by
character (substring), so a two-character word such as 权重 is found without a dictionary.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Final

# Normalized text never holds it (str.split() counts it as whitespace): the store joins values
# with it, so a word cannot match across two of them.
SEP: Final = "\x1f"


def normalize_text(text: str) -> str:
    """`text` as queries compare it: NFKC, casefolded (and NFKC again, as casefolding can undo
    it), whitespace runs collapsed to one space, trimmed."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return " ".join(folded.split())


# The report fields bare words and phrases search, in the order explanations name them; the
# store's full-text index holds exactly these (one list, or the two could disagree).
TEXT_FIELDS: Final = (
    "title",
    "summary",
    "recommendation",
    "motivation",
    "implementation",
    "risks",
    "impact",
    "comment_highlights",
)


# Chinese, Japanese and Korean: CJK symbols and punctuation, kana, Hangul, the CJK ideographs
# and their extensions and compatibility forms. Written as ranges so that the index's word
# lists (store/search/text_index.py) are cut where this module cuts them.
CJK_RANGES: Final = (
    (0x1100, 0x11FF),
    (0x2E80, 0x2FDF),
    (0x3000, 0x303F),
    (0x3040, 0x30FF),
    (0x3130, 0x318F),
    (0x31A0, 0x31FF),
    (0x3200, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7FF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x20000, 0x3FFFF),
)
_CJK_CLASS: Final = "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in CJK_RANGES)
# A word character: `\w` but not CJK.
_WORD_CHAR: Final = rf"(?:(?![{_CJK_CLASS}])\w)"
WORD_RUN: Final = re.compile(rf"{_WORD_CHAR}+")
_IS_WORD_CHAR: Final = re.compile(_WORD_CHAR)


def is_word_char(char: str) -> bool:
    """Whether `char` is a word character: a letter, digit or `_`, not Chinese, Japanese or
    Korean."""
    return _IS_WORD_CHAR.fullmatch(char) is not None


def word_tokens(text: str) -> set[str]:
    """The whole words of a normalized text: its maximal runs of word characters."""
    return set(WORD_RUN.findall(text))


def is_one_word(needle: str) -> bool:
    """Whether a normalized needle is one run of word characters (`ci`, `fp8`, `load_format`):
    it is found exactly where the text has that whole word."""
    return WORD_RUN.fullmatch(needle) is not None


@lru_cache(maxsize=4096)
def needle_pattern(needle: str, prefix: bool = False) -> re.Pattern[str]:
    """`needle` (normalized, not empty) found where its word-character edges meet the text's
    non-word characters or ends; `prefix`: its end may run on (`roll*`)."""
    start = rf"(?<!{_WORD_CHAR})" if is_word_char(needle[0]) else ""
    end = rf"(?!{_WORD_CHAR})" if not prefix and is_word_char(needle[-1]) else ""
    return re.compile(start + re.escape(needle) + end)


def contains(text: str, needle: str, prefix: bool = False) -> bool:
    """Whether normalized `text` holds `needle` as the query language reads it (the module's
    docstring): the empty needle is in every text."""
    if not needle:
        return True
    if needle not in text:  # the cheap test first: most texts do not hold it at all
        return False
    return needle_pattern(needle, prefix).search(text) is not None
