"""The one text normalization of queries and indexes: what a word is compared as.

NFKC folds full-width forms (`ＦＰ８` is `fp8`) and compatibility characters, casefold lowers
Latin, Greek and the rest; whitespace runs become one space so a phrase matches across line
breaks. Chinese is compared character by character (substring), so a two-character word such
as 权重 is found without a dictionary.
"""

from __future__ import annotations

import unicodedata
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
