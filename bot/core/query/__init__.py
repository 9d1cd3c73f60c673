"""The query language: `tag:rollout -tag:ci 权重 impact>=medium`.

`parse` reads text into a small AST (ast.py), `matches`/`explain` evaluate it on one report
(the brute-force reference the store's index is checked against), `text_needles` tells an
index which strings every match contains, and `normalize_text` is the one text folding.
"""

from bot.core.query.ast import And, Field, Not, Or, Query, Text, unparse
from bot.core.query.errors import QueryError
from bot.core.query.evaluate import explain, matches, text_needles
from bot.core.query.parser import parse
from bot.core.query.text import TEXT_FIELDS, normalize_text

__all__ = [
    "TEXT_FIELDS",
    "And",
    "Field",
    "Not",
    "Or",
    "Query",
    "QueryError",
    "Text",
    "explain",
    "matches",
    "normalize_text",
    "parse",
    "text_needles",
    "unparse",
]
