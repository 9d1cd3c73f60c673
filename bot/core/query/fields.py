"""The query language's fields: one table, read by the parser, the evaluator and the store.

Each field is one FieldSpec: its name, the other spellings the parser accepts for it, and the
kind of value it takes (which says how values.canonical checks and folds the value, and
whether the field takes `>=`, `>`, `<=`, `<` besides `:`). The parser accepts exactly these
names; the evaluator (evaluate.py) and the store's SQL compiler (store/search/compile.py) each
keep their own implementation per field in a mapping keyed by these names, and check_covers
proves on import that such a mapping has every field and nothing else, so a field added here
without its implementation stops the bot at start instead of matching wrongly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Final, TypeVar

_T = TypeVar("_T")


class Kind(Enum):
    """What a field's value is, as the parser makes it canonical (values.canonical)."""

    TEXT = "text"  # normalized text compared whole (text.normalize_text)
    TEXT_OR_ANY = "text or *"  # normalized text found inside, or `*` for any
    REPO = "repo"  # `name` or `owner/name`, lowercased
    IMPACT = "impact level"  # low < medium < high
    REC = "recommendation level"  # skip < skim < read < must_read
    GLOB = "path glob"  # kept as written (reading.glob_text reads it)
    SYMBOL = "symbol"  # kept as written, compared case-insensitively
    TIME = "date or age"  # `2026-11-01`, or `7d` / `2w` / `12h` back from now
    NUMBER = "number or range"  # `7422`, `7400..7500` (either end may be empty)


# The kinds whose values are ordered, so their fields take the comparisons too.
ORDERED_KINDS: Final = frozenset({Kind.IMPACT, Kind.REC, Kind.NUMBER})


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field: `name` is what an AST Field holds (and `unparse` writes); `aliases` are
    other spellings the parser reads as it (lowercase)."""

    name: str
    kind: Kind
    aliases: tuple[str, ...] = ()

    @property
    def ordered(self) -> bool:
        """Whether the field takes `>=`, `>`, `<=`, `<` as well as `:`."""
        return self.kind in ORDERED_KINDS


# Every field, in the order the help and the "did you mean" hint list them.
FIELD_TABLE: Final = (
    FieldSpec("tag", Kind.TEXT),
    FieldSpec("repo", Kind.REPO),
    FieldSpec("risk", Kind.TEXT_OR_ANY),
    FieldSpec("impact", Kind.IMPACT),
    FieldSpec("rec", Kind.REC),
    FieldSpec("file", Kind.GLOB),
    FieldSpec("symbol", Kind.SYMBOL),
    FieldSpec("since", Kind.TIME),
    FieldSpec("before", Kind.TIME),
    FieldSpec("number", Kind.NUMBER),
)


class FieldTableError(LookupError):
    """A field name the table does not hold, or an implementation that does not cover the
    table exactly: a mistake in the code, never in a user's query (the parser refuses an
    unknown field with a QueryError before anything else reads it)."""


def spellings(table: Iterable[FieldSpec]) -> dict[str, FieldSpec]:
    """Every name and alias of `table`, lowercase, to its field; FieldTableError when two
    fields claim one spelling."""
    found: dict[str, FieldSpec] = {}
    for spec in table:
        for spelling in (spec.name, *spec.aliases):
            if spelling in found:
                raise FieldTableError(f"query field spelling '{spelling}' is claimed twice")
            found[spelling] = spec
    return found


# What the parser accepts as a field name (names and aliases), and the fields by name.
SPELLINGS: Final = spellings(FIELD_TABLE)
BY_NAME: Final = {spec.name: spec for spec in FIELD_TABLE}


def for_field(implemented: Mapping[str, _T], name: str) -> _T:
    """`implemented[name]`, a per-field mapping's entry for an AST Field's `name`;
    FieldTableError naming the fields when `name` is no field (an AST made in code: the
    parser refuses an unknown field), rather than a bare KeyError or a fallback."""
    try:
        return implemented[name]
    except KeyError:
        fields = ", ".join(BY_NAME)
        raise FieldTableError(f"unknown query field '{name}' (fields: {fields})") from None


def field_spec(name: str) -> FieldSpec:
    """The field an AST Field's `name` names; FieldTableError when there is none."""
    return for_field(BY_NAME, name)


def check_covers(
    what: str, implemented: Mapping[str, object], table: Iterable[FieldSpec] = FIELD_TABLE
) -> None:
    """FieldTableError unless `implemented` (`what`'s per-field mapping) is keyed by exactly
    the names of `table`: the error names the fields it lacks and the keys that are none."""
    names = [spec.name for spec in table]
    missing = [name for name in names if name not in implemented]
    extra = sorted(set(implemented) - set(names))
    if missing or extra:
        lacks = f" lacks {', '.join(missing)}" if missing else ""
        joiner = ";" if missing and extra else ""
        unknown = f" has no field {', '.join(extra)}" if extra else ""
        raise FieldTableError(f"{what}{lacks}{joiner}{unknown}")
