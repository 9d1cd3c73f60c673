"""The query language's grammar: each term, operator, precedence, and every error word for word."""

from __future__ import annotations

import pytest

from bot.core.query import And, Field, Not, Or, QueryError, Text, parse, unparse
from bot.core.query.parser import MAX_DEPTH, MAX_QUERY_LENGTH, MAX_TERMS

A, B, C = Text("a"), Text("b"), Text("c")


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("tag:rollout", Field("tag", ":", "rollout")),
        ("TAG:RollOut", Field("tag", ":", "rollout")),
        ("repo:verl-project/verl", Field("repo", ":", "verl-project/verl")),
        ("repo:Verl", Field("repo", ":", "verl")),
        ("risk:FP8", Field("risk", ":", "fp8")),
        ("risk:*", Field("risk", ":", "*")),
        ("impact:high", Field("impact", ":", "high")),
        ("impact:高", Field("impact", ":", "high")),
        ("impact>=medium", Field("impact", ">=", "medium")),
        ("impact>low", Field("impact", ">", "low")),
        ("impact<=medium", Field("impact", "<=", "medium")),
        ("impact<high", Field("impact", "<", "high")),
        ("rec:must_read", Field("rec", ":", "must_read")),
        ("rec:must-read", Field("rec", ":", "must_read")),
        ("rec>=read", Field("rec", ">=", "read")),
        ("file:vllm_rollout.py", Field("file", ":", "vllm_rollout.py")),
        ("file:verl/workers/**", Field("file", ":", "verl/workers/**")),
        ('file:"docs/a b.md"', Field("file", ":", "docs/a b.md")),
        ("symbol:LLMServerClient", Field("symbol", ":", "LLMServerClient")),
        ("since:7d", Field("since", ":", "7d")),
        ("since:2W", Field("since", ":", "2w")),
        ("since:12h", Field("since", ":", "12h")),
        ("since:2026-11-01", Field("since", ":", "2026-11-01")),
        ("before:2026-11-01", Field("before", ":", "2026-11-01")),
        ("number:7422", Field("number", ":", "7422")),
        ("number:7400..7500", Field("number", ":", "7400..7500")),
        ("number:7400..", Field("number", ":", "7400..")),
        ("number:..7500", Field("number", ":", "..7500")),
        ("number>=7400", Field("number", ">=", "7400")),
        ("#7422", Field("number", ":", "7422")),
        ("权重", Text("权重")),
        ("ＦＰ８", Text("fp8")),
        ('"Weight   Sync"', Text("weight sync", phrase=True)),
        ("#abc", Text("#abc")),
        ("or", Text("or")),  # only upper-case OR/AND/NOT are operators
    ],
)
def test_each_term(text: str, query: object) -> None:
    assert parse(text) == query


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("a b", And((A, B))),
        ("a AND b", And((A, B))),
        ("a OR b", Or((A, B))),
        ("NOT a", Not(A)),
        ("-a", Not(A)),
        ("NOT NOT a", Not(Not(A))),
        # NOT binds tighter than AND, AND tighter than OR
        ("NOT a b", And((Not(A), B))),
        ("a b OR c", Or((And((A, B)), C))),
        ("a OR b c", Or((A, And((B, C))))),
        ("a OR b OR c", Or((A, B, C))),
        ("a (b OR c)", And((A, Or((B, C))))),
        ("(a b) c", And((A, B, C))),
        ("-(a OR b) c", And((Not(Or((A, B))), C))),
        ("((a))", A),
        (
            "tag:rollout -tag:ci",
            And((Field("tag", ":", "rollout"), Not(Field("tag", ":", "ci")))),
        ),
        ("fp8-quant", Text("fp8-quant")),  # `-` inside a word is the word's
    ],
)
def test_operators_and_precedence(text: str, query: object) -> None:
    assert parse(text) == query


@pytest.mark.parametrize(
    "text",
    [
        'tag:rollout -tag:ci (权重 OR "weight sync") impact>=medium',
        '-(a OR b) c number:7400..7500 file:"a b/*.py"',
        "a b OR c",
    ],
)
def test_unparse_reads_back_the_same_query(text: str) -> None:
    query = parse(text)
    assert parse(unparse(query)) == query


@pytest.mark.parametrize(
    ("text", "message", "position"),
    [
        ("rsk:FP8", "query: unknown field 'rsk' at 1 (did you mean risk?)", 1),
        ("tag:a fiel:x.py", "query: unknown field 'fiel' at 7 (did you mean file?)", 7),
        (
            "foo:bar",
            "query: unknown field 'foo' at 1 (fields: tag, repo, risk, impact, rec, file, "
            "symbol, since, before, number)",
            1,
        ),
        ("", "query: empty", None),
        ("   ", "query: empty", None),
        ("tag:a (b OR c", "query: unclosed '(' at 7", 7),
        ("tag:a b) c", "query: unexpected ')' at 8", 8),
        (")", "query: unexpected ')' at 1", 1),
        ("a ()", "query: empty parentheses at 3", 3),
        ('a "b c', "query: unclosed '\"' at 3", 3),
        ('a ""', "query: empty phrase at 3", 3),
        (
            "since:yesterday",
            "query: bad date 'yesterday' at 7 (use 7d, 2w or 2026-11-01)",
            7,
        ),
        (
            "before:2026-13-01",
            "query: bad date '2026-13-01' at 8 (use 7d, 2w or 2026-11-01)",
            8,
        ),
        ("impact:huge", "query: unknown impact 'huge' at 8 (low, medium, high)", 8),
        ("rec>=later", "query: unknown rec 'later' at 6 (skip, skim, read, must_read)", 6),
        ("number:7500..7400", "query: bad range '7500..7400' at 8 (use 7400..7500)", 8),
        ("number:abc", "query: bad number 'abc' at 8 (use 7422 or 7400..7500)", 8),
        ("number:..", "query: bad number '..' at 8 (use 7422 or 7400..7500)", 8),
        ("number>=1..2", "query: bad number '1..2' at 9 (a range takes ':')", 9),
        ("tag>=ci", "query: tag takes ':', not '>=' at 1", 1),
        ("a tag:", "query: tag: needs a value at 3", 3),
        ("a OR", "query: OR needs a term on each side at 3", 3),
        ("OR a", "query: OR needs a term on each side at 1", 1),
        ("a OR OR b", "query: OR needs a term on each side at 3", 3),
        ("AND a", "query: AND needs a term on each side at 1", 1),
        ("a (OR b)", "query: OR needs a term on each side at 4", 4),
        ("a NOT", "query: NOT needs a term after it at 3", 3),
        ("a -", "query: '-' needs a term right after it at 3", 3),
        ("a - b", "query: '-' needs a term right after it at 3", 3),
    ],
)
def test_errors_word_for_word(text: str, message: str, position: int | None) -> None:
    with pytest.raises(QueryError) as caught:
        parse(text)
    assert str(caught.value) == message
    assert caught.value.position == position
    assert isinstance(caught.value, ValueError)


def test_hostile_nesting_is_an_error_not_a_crash() -> None:
    deep = "(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1)
    with pytest.raises(QueryError) as caught:
        parse(deep)
    assert str(caught.value) == f"query: nested too deeply at {MAX_DEPTH + 1} (at most 32 levels)"
    assert parse("(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH) == A
    with pytest.raises(QueryError, match="nested too deeply"):
        parse("NOT " * (MAX_DEPTH + 1) + "a")


def test_too_long() -> None:
    with pytest.raises(QueryError) as caught:
        parse("a" * (MAX_QUERY_LENGTH + 1))
    assert str(caught.value) == f"query: too long (2001 characters, at most {MAX_QUERY_LENGTH})"


def test_a_query_of_more_than_max_terms_is_refused_by_count() -> None:
    # 220 ORed words with no space between them are one chat argument, and still 220 terms.
    crowded = "OR".join(f"(w{i}x)" for i in range(220))
    with pytest.raises(QueryError) as caught:
        parse(crowded)
    assert str(caught.value).startswith(f"query: too many terms (220, at most {MAX_TERMS}) at ")
    assert caught.value.hint == "narrow the query"
    anded = " ".join(f"tag:t{i}" for i in range(MAX_TERMS + 1))
    with pytest.raises(QueryError, match="too many terms"):
        parse(anded)
    assert isinstance(parse(" ".join(f"w{i}" for i in range(MAX_TERMS))), And)


@pytest.mark.parametrize("char", ["\x00", "\x01", "\x1b", "\x7f", "\x85"])
def test_control_characters_are_refused_by_name_and_place(char: str) -> None:
    with pytest.raises(QueryError) as caught:
        parse(f'tag:ci "roll{char}out"')
    assert str(caught.value) == (
        f"query: control character U+{ord(char):04X} at 13 (a query is plain text)"
    )


def test_tabs_and_line_breaks_still_separate_terms() -> None:
    assert parse("a\tb\r\nc") == And((Text("a"), Text("b"), Text("c")))


def test_a_trailing_star_asks_a_words_start() -> None:
    assert parse("roll*") == Text("roll", prefix=True)
    assert parse("ＲＯＬＬ＊") == Text("roll", prefix=True)
    assert parse('"roll*"') == Text("roll*", phrase=True)  # quoted: the text itself
    assert parse("*") == Text("*")
    assert unparse(parse("roll* -ci")) == "roll* -ci"
    assert parse(unparse(Text("roll*"))) == Text("roll*", phrase=True)
