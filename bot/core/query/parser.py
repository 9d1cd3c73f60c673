"""Query text → Query (ast.py): terms joined by AND, then OR; NOT or `-`; parentheses.

    query   := or EOF
    or      := and ("OR" and)*
    and     := unary (["AND"] unary)*      terms side by side are ANDed
    unary   := ("NOT" | "-") unary | primary
    primary := "(" or ")" | PHRASE | WORD  a WORD is `field op value`, a PR or a bare word

A PR is `#7422` (number:7422), `verl#7422` or `owner/repo#7422` (that repo's number:7422, the
repo a name as `repo:verl` reads it); a bare number `7422` is that PR or the word 7422 in the
text (`number:7422 OR 7422`); quoted, `"7422"` is the word alone.

Precedence NOT > AND > OR. Recursive descent with a depth bound (nesting and NOT chains), so
a hostile query neither overflows the stack nor costs more than linear time. A query holds at
most MAX_TERMS terms (words, phrases and field terms), which bounds what the database is asked
per query, and no control characters (a NUL cannot be asked of the index: see
store/search/compile.py).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from typing import Final

from bot.core.query.ast import FIELDS, And, Field, Not, Or, Query, Text, is_bare_number
from bot.core.query.errors import QueryError
from bot.core.query.fields import SPELLINGS
from bot.core.query.lexer import Token, tokenize
from bot.core.query.text import normalize_text
from bot.core.query.values import canonical

MAX_QUERY_LENGTH: Final = 2000  # characters; a chat message or a config line
MAX_DEPTH: Final = 32  # parentheses and NOTs inside one another
MAX_TERMS: Final = 64  # words, phrases and field terms in one query
_TYPED_WHITESPACE: Final = frozenset("\t\n\r")  # control characters a pasted query may hold
_FIELD_TERM = re.compile(r"([A-Za-z]+)(>=|<=|:|>|<)(.*)", re.DOTALL)
# A PR as a digest labels it or a person types it: `#7422`, `verl#7422`, `owner/repo#7422`.
_PR_NUMBER = re.compile(r"(?:([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?))?#([0-9]+)")
_BARE_NUMBER = re.compile(r"[0-9]{1,10}")  # `7422`: that PR, or the word in a report's text
_STOPS: Final = frozenset({"OR", ")"})  # what ends an AND run


def parse(text: str, *, max_terms: int | None = MAX_TERMS) -> Query:
    """The query `text` says; QueryError naming what is wrong and where. `max_terms=None`
    reads a query stored before the cap (a subscription's filter, evaluated in memory, never
    sent to the database as SQL): it is not refused for its size."""
    if len(text) > MAX_QUERY_LENGTH:
        raise QueryError(
            f"too long ({len(text)} characters, at most {MAX_QUERY_LENGTH})",
            key="query_too_long",
            params={"n": str(len(text)), "limit": str(MAX_QUERY_LENGTH)},
        )
    _refuse_control_characters(text)
    tokens = tokenize(text)
    if not tokens:
        raise QueryError("empty", key="query_empty")
    if max_terms is not None:
        _count_terms(tokens, max_terms)
    return _Parser(tokens).query()


def _refuse_control_characters(text: str) -> None:
    for index, char in enumerate(text):
        if unicodedata.category(char) == "Cc" and char not in _TYPED_WHITESPACE:
            raise QueryError(
                f"control character U+{ord(char):04X}",
                index + 1,
                "a query is plain text",
                key="query_control",
                params={"code": f"U+{ord(char):04X}"},
            )


def _count_terms(tokens: list[Token], limit: int) -> None:
    """At most `limit` terms: the error names how many and where the first one too many is."""
    terms = [token for token in tokens if token.kind in ("WORD", "PHRASE")]
    if len(terms) > limit:
        raise QueryError(
            f"too many terms ({len(terms)}, at most {limit})",
            terms[limit].position,
            "narrow the query",
            key="query_too_many_terms",
            params={"n": str(len(terms)), "limit": str(limit)},
        )


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.at = 0
        self.depth = 0

    def peek(self) -> Token | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def query(self) -> Query:
        result = self.or_()
        extra = self.peek()
        if extra is not None:  # only a `)` stops an OR run before the end
            raise QueryError("unexpected ')'", extra.position, key="query_unexpected_paren")
        return result

    def or_(self) -> Query:
        items = [self.and_()]
        while (token := self.peek()) is not None and token.kind == "OR":
            self.take()
            self.need_term_after(token)
            items.append(self.and_())
        return _joined(Or, items)

    def and_(self) -> Query:
        items: list[Query] = []
        while (token := self.peek()) is not None and token.kind not in _STOPS:
            if token.kind == "AND":
                if not items:
                    raise QueryError(
                        "AND needs a term on each side",
                        token.position,
                        key="query_both_sides",
                        params={"op": "AND"},
                    )
                self.take()
                self.need_term_after(token)
            items.append(self.unary())
        if not items:  # `OR a`, `a OR OR b` are caught before; here `)` opens a run
            token = self.peek()
            assert token is not None
            if token.kind == ")":
                raise QueryError("unexpected ')'", token.position, key="query_unexpected_paren")
            raise QueryError(
                f"{token.kind} needs a term on each side",
                token.position,
                key="query_both_sides",
                params={"op": token.kind},
            )
        return _joined(And, items)

    def unary(self) -> Query:
        token = self.peek()
        assert token is not None  # and_ looked
        if token.kind not in ("NOT", "-"):
            return self.primary()
        self.take()
        self.need_term_after(token)
        self.enter(token)
        item = self.unary()
        self.depth -= 1
        return Not(item)

    def primary(self) -> Query:
        token = self.take()
        if token.kind == "(":
            return self.group(token)
        if token.kind == "PHRASE":
            return _phrase(token)
        if token.kind == "WORD":
            return _word(token)
        # OR/AND where a term should be (`(OR a)`), or a stray `)` reached by need_term_after
        raise QueryError(
            f"{token.kind} needs a term on each side",
            token.position,
            key="query_both_sides",
            params={"op": token.kind},
        )

    def group(self, opening: Token) -> Query:
        self.enter(opening)
        following = self.peek()
        if following is not None and following.kind == ")":
            raise QueryError("empty parentheses", opening.position, key="query_empty_parens")
        inner = self.or_()
        closing = self.peek()
        if closing is None:
            raise QueryError("unclosed '('", opening.position, key="query_unclosed_paren")
        self.take()
        self.depth -= 1
        return inner

    def need_term_after(self, token: Token) -> None:
        following = self.peek()
        if following is None or following.kind in ("OR", "AND", ")"):
            shown = "'-'" if token.kind == "-" else token.kind
            side = "after it" if token.kind in ("NOT", "-") else "on each side"
            key = "query_after" if token.kind in ("NOT", "-") else "query_both_sides"
            raise QueryError(
                f"{shown} needs a term {side}", token.position, key=key, params={"op": token.kind}
            )

    def enter(self, token: Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise QueryError(
                "nested too deeply",
                token.position,
                f"at most {MAX_DEPTH} levels",
                key="query_too_deep",
                params={"limit": str(MAX_DEPTH)},
            )


def _joined(kind: type[And] | type[Or], items: list[Query]) -> Query:
    """One item stays itself; nested And in And (Or in Or) are flattened, but for a bare
    number's `number:N OR N`, which stays one term (ast.is_bare_number)."""
    flat: list[Query] = []
    for item in items:
        nested = isinstance(item, kind) and not is_bare_number(item)
        flat.extend(item.items if nested and isinstance(item, And | Or) else (item,))
    return flat[0] if len(flat) == 1 else kind(tuple(flat))


def _phrase(token: Token) -> Query:
    value = normalize_text(token.text)
    if not value:
        raise QueryError("empty phrase", token.position, key="query_empty_phrase")
    return Text(value, phrase=True)


def _word(token: Token) -> Query:
    pr = _pr(token)
    if pr is not None:
        return pr
    found = _FIELD_TERM.fullmatch(token.text)
    if found is None:
        value = normalize_text(token.text)
        stem = value[:-1]
        if value.endswith("*") and stem and "*" not in stem:  # `roll*`: words starting so
            return Text(stem, prefix=True)
        return Text(value)
    written, op, raw = found.groups()
    spec = SPELLINGS.get(written.lower())
    if spec is None:
        close = difflib.get_close_matches(written.lower(), SPELLINGS, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]}?" if close else "fields: " + ", ".join(FIELDS)
        key, params = (
            ("query_field_guess", {"field": written, "guess": close[0]})
            if close
            else ("query_field", {"field": written, "fields": ", ".join(FIELDS)})
        )
        raise QueryError(f"unknown field '{written}'", token.position, hint, key=key, params=params)
    value_at = token.position + len(written) + len(op) + (1 if token.quoted else 0)
    return Field(spec.name, op, canonical(spec.name, op, raw, token.position, value_at))


def _pr(token: Token) -> Query | None:
    """The PR a WORD names (`#7422`, `verl#7422`, `owner/repo#7422`, `7422`); None if none."""
    named = _PR_NUMBER.fullmatch(token.text)
    if named is not None:
        repo, digits = named.groups()
        at = token.position + len(repo or "") + 1
        number = Field("number", ":", canonical("number", ":", digits, token.position, at))
        if repo is None:
            return number
        return And((Field("repo", ":", canonical("repo", ":", repo, token.position, 0)), number))
    if not token.quoted and _BARE_NUMBER.fullmatch(token.text):
        try:
            value = canonical("number", ":", token.text, token.position, token.position)
        except QueryError:  # no PR has it (0, or past the largest number): the word alone
            return None
        return Or((Field("number", ":", value), Text(normalize_text(token.text))))
    return None
