"""The one table of query fields (query/fields.py): the parser, the evaluator, the SQL compiler
and the test kit all read it, cover it exactly, and refuse a name that is no field."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

import bot.core.query.parser as parser_module
from bot.core.query import And, Field, Not, Or, Query, Text, explain, matches, parse, unparse
from bot.core.query.ast import COMPARISONS, FIELDS
from bot.core.query.evaluate import FIELD_TESTS
from bot.core.query.fields import (
    BY_NAME,
    FIELD_TABLE,
    SPELLINGS,
    FieldSpec,
    FieldTableError,
    Kind,
    check_covers,
    field_spec,
    for_field,
    spellings,
)
from bot.core.query.values import canonical
from bot.core.reports.model import Report
from bot.core.store.search.compile import FIELD_SQL, compile_query
from tests.kits.queries import BY_KIND, LEAVES, Pool

NOW = datetime(2026, 11, 10, 12, 0, tzinfo=UTC)
NAMES = [spec.name for spec in FIELD_TABLE]
REPORT = Report(repo="verl-project/verl", number=7422, title="t", tags=["rollout"])
# A field no table holds; `file` is what the compiler once fell back to for any unknown name.
MADE_UP = Field("owner", ":", "verl")
WITH_MADE_UP = (*FIELD_TABLE, FieldSpec("owner", Kind.TEXT))


def test_the_table_names_each_field_once_in_the_listed_order() -> None:
    assert tuple(NAMES) == FIELDS
    assert len(set(NAMES)) == len(NAMES)
    assert list(BY_NAME) == NAMES
    assert set(SPELLINGS) == {s for spec in FIELD_TABLE for s in (spec.name, *spec.aliases)}
    assert all(name == name.lower() and name.isalpha() for name in SPELLINGS)


def test_only_ordered_kinds_take_comparisons() -> None:
    ordered = {spec.name for spec in FIELD_TABLE if spec.ordered}
    assert ordered == {"impact", "rec", "number"}
    for spec in FIELD_TABLE:
        if not spec.ordered:
            with pytest.raises(ValueError, match=f"{spec.name} takes ':', not '>='"):
                parse(f"{spec.name}>=x")


def test_the_evaluator_and_the_compiler_cover_the_table_exactly() -> None:
    assert set(FIELD_TESTS) == set(NAMES)
    assert set(FIELD_SQL) == set(NAMES)
    check_covers("evaluator", FIELD_TESTS)
    check_covers("compiler", FIELD_SQL)


def test_the_kit_draws_every_field_of_the_table() -> None:
    assert set(BY_KIND) == set(Kind)
    assert set(NAMES) <= set(LEAVES)


@pytest.mark.parametrize("name", NAMES)
def test_every_field_parses_back_from_its_text(name: str) -> None:
    rng = random.Random(name)
    pool = Pool(numbers=[7422])
    for _ in range(20):
        op, value = BY_KIND[field_spec(name).kind][1](rng, pool)
        term = Field(name, op, value)
        assert parse(unparse(term)) == term


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (WITH_MADE_UP, "evaluator lacks owner"),
        (FIELD_TABLE[1:], "evaluator has no field tag"),
        ((*FIELD_TABLE[1:], FieldSpec("owner", Kind.TEXT)), "lacks owner; has no field tag"),
    ],
)
def test_the_check_refuses_a_table_the_mapping_does_not_match(
    table: tuple[FieldSpec, ...], message: str
) -> None:
    # A field added to the table (or taken out) without its evaluator stops the import.
    with pytest.raises(FieldTableError, match=message):
        check_covers("evaluator", FIELD_TESTS, table)
    with pytest.raises(FieldTableError, match=message.replace("evaluator", "compiler")):
        check_covers("compiler", FIELD_SQL, table)


def test_the_check_refuses_a_mapping_with_a_name_that_is_no_field() -> None:
    with pytest.raises(FieldTableError, match="kit has no field owner"):
        check_covers("kit", {**FIELD_TESTS, "owner": None})
    with pytest.raises(FieldTableError, match="kit lacks since"):
        check_covers("kit", {k: v for k, v in FIELD_TESTS.items() if k != "since"})


@pytest.mark.parametrize(
    "query",
    [MADE_UP, Not(MADE_UP), And((Text("x"), MADE_UP)), Or((Field("tag", ":", "x"), MADE_UP))],
    ids=["alone", "not", "and", "or"],
)
def test_the_evaluator_refuses_an_unknown_field(query: Query) -> None:
    with pytest.raises(FieldTableError, match="unknown query field 'owner' \\(fields: tag, "):
        matches(query, REPORT, now=NOW)
    with pytest.raises(FieldTableError, match="unknown query field 'owner'"):
        explain(query, REPORT, now=NOW)


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
@pytest.mark.parametrize(
    "query",
    [
        MADE_UP,
        Field("owner", ":", "*.py"),  # what the compiler once asked as `file:*.py`
        Field("owner", ":", "a\x00b"),  # a value SQL cannot ask: still an error, not inexact
        Not(MADE_UP),
        And((Text("rollout"), MADE_UP)),
        Or((Field("tag", ":", "x"), MADE_UP)),
    ],
    ids=["alone", "glob", "unstorable", "not", "and", "or"],
)
def test_the_compiler_refuses_an_unknown_field(dialect: str, query: Query) -> None:
    with pytest.raises(FieldTableError, match="unknown query field 'owner'"):
        compile_query(query, dialect=dialect, now=NOW)


def test_the_value_reader_and_the_lookup_refuse_an_unknown_field() -> None:
    with pytest.raises(FieldTableError, match="unknown query field 'owner'"):
        canonical("owner", ":", "verl", 1, 7)
    with pytest.raises(FieldTableError, match="unknown query field 'owner'"):
        field_spec("owner")
    assert for_field(FIELD_TESTS, "tag") is FIELD_TESTS["tag"]


def test_the_parser_refuses_an_unknown_field_with_a_hint() -> None:
    with pytest.raises(ValueError, match=r"unknown field 'Owner' at 1 \(fields: tag, repo"):
        parse("Owner:verl")


def test_the_parser_reads_an_alias_as_its_field(monkeypatch: pytest.MonkeyPatch) -> None:
    tag = FieldSpec("tag", Kind.TEXT, aliases=("label",))
    table = (tag, *FIELD_TABLE[1:])
    monkeypatch.setattr(parser_module, "SPELLINGS", spellings(table))
    assert parse("Label:CI") == Field("tag", ":", "ci")  # written back under its name
    assert unparse(parse("-label:ci")) == "-tag:ci"
    with pytest.raises(ValueError, match="did you mean label"):
        parse("labl:ci")


def test_two_fields_cannot_claim_one_spelling() -> None:
    with pytest.raises(FieldTableError, match="'tag' is claimed twice"):
        spellings((*FIELD_TABLE, FieldSpec("label", Kind.TEXT, aliases=("tag",))))


def test_comparisons_are_what_ordered_fields_take() -> None:
    for op in COMPARISONS:
        assert parse(f"impact{op}medium") == Field("impact", op, "medium")
