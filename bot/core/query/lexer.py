"""Query text → tokens: parentheses, quoted phrases, a leading `-`, OR/AND/NOT, and words.

One pass, index by index, no regex over the whole input: a hostile query costs linear time.
A word ends at whitespace, a parenthesis or a quote; `field:"two words"` takes a quoted value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from bot.core.query.errors import QueryError

KEYWORDS: Final = frozenset({"OR", "AND", "NOT"})
# `name` + operator with nothing after it: a quoted value follows (`file:"a b/*.py"`).
_FIELD_PREFIX = re.compile(r"[A-Za-z]+(?:>=|<=|:|>|<)")
_WORD_END: Final = frozenset('()"')


@dataclass(frozen=True, slots=True)
class Token:
    """`kind` is `(`, `)`, `-`, `OR`, `AND`, `NOT`, `WORD` or `PHRASE`; `position` is 1-based.

    A WORD `file:"a b"` has text `file:a b` and `quoted` set."""

    kind: str
    text: str
    position: int
    quoted: bool = False


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in "()":
            tokens.append(Token(ch, ch, i + 1))
            i += 1
        elif ch == '"':
            end = _closing_quote(text, i)
            tokens.append(Token("PHRASE", text[i + 1 : end], i + 1))
            i = end + 1
        elif ch == "-":
            if i + 1 == n or text[i + 1].isspace():
                raise QueryError("'-' needs a term right after it", i + 1, key="query_dash")
            tokens.append(Token("-", "-", i + 1))
            i += 1
        else:
            token, i = _word(text, i)
            tokens.append(token)
    return tokens


def _word(text: str, start: int) -> tuple[Token, int]:
    end, n = start, len(text)
    while end < n and not text[end].isspace() and text[end] not in _WORD_END:
        end += 1
    word = text[start:end]
    if end < n and text[end] == '"' and _FIELD_PREFIX.fullmatch(word):
        close = _closing_quote(text, end)
        return Token("WORD", word + text[end + 1 : close], start + 1, quoted=True), close + 1
    kind = word if word in KEYWORDS else "WORD"
    return Token(kind, word, start + 1), end


def _closing_quote(text: str, opening: int) -> int:
    close = text.find('"', opening + 1)
    if close < 0:
        raise QueryError("unclosed '\"'", opening + 1, key="query_unclosed_quote")
    return close
