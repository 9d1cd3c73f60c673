"""Field values: checked and made canonical when a query is parsed, read when it is evaluated.

One module for both, so the parser never accepts a value the evaluator cannot read, and the
index helper bounds numbers, levels and times exactly as the brute-force evaluator does.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final, assert_never

from bot.core.query.errors import QueryError
from bot.core.query.fields import Kind, field_spec
from bot.core.query.text import normalize_text
from bot.core.reports.model import ImpactLevel, RecommendationLevel

IMPACT_ORDER: Final = (ImpactLevel.LOW, ImpactLevel.MEDIUM, ImpactLevel.HIGH)
REC_ORDER: Final = (
    RecommendationLevel.SKIP,
    RecommendationLevel.SKIM,
    RecommendationLevel.READ,
    RecommendationLevel.MUST_READ,
)
_IMPACT_NAMES: Final = {level.value: level.value for level in IMPACT_ORDER} | {
    "低": "low",
    "中": "medium",
    "高": "high",
}
_REC_NAMES: Final = {level.value: level.value for level in REC_ORDER} | {
    "must-read": "must_read",
    "mustread": "must_read",
}
# An age (`7d`, `2w`, `12h`; five digits at most, so `now - age` stays a datetime) or a date.
_AGE = re.compile(r"([0-9]{1,5})([hdw])")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_AGE_UNITS: Final = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}
_NUMBER = re.compile(r"[0-9]{1,12}")
_RANGE = re.compile(r"([0-9]{0,12})\.\.([0-9]{0,12})")
DATE_HINT: Final = "use 7d, 2w or 2026-11-01"
NUMBER_HINT: Final = "use 7422 or 7400..7500"


def canonical(name: str, op: str, raw: str, start: int, position: int) -> str:
    """The value of `name op raw` as a Field keeps it, as the field's kind (fields.py) reads
    it; QueryError when it is not one, at the term's `start` or at the value's `position`
    (both 1-based)."""
    spec = field_spec(name)
    if op != ":" and not spec.ordered:
        raise QueryError(
            f"{name} takes ':', not '{op}'",
            start,
            key="query_operator",
            params={"field": name, "op": op},
        )
    value = raw.strip()
    if not value:
        raise QueryError(
            f"{name}{op} needs a value",
            start,
            key="query_no_value",
            params={"field": name, "op": op},
        )
    kind = spec.kind
    match kind:
        case Kind.TEXT:
            return normalize_text(value)
        case Kind.REPO:
            return " ".join(value.lower().split())
        case Kind.TEXT_OR_ANY:
            return "*" if value == "*" else normalize_text(value)
        case Kind.IMPACT:
            return _level(_IMPACT_NAMES, name, value, position, "low, medium, high")
        case Kind.REC:
            return _level(_REC_NAMES, name, value, position, "skip, skim, read, must_read")
        case Kind.TIME:
            return _time(value, position)
        case Kind.NUMBER:
            return _number(op, value, position)
        case Kind.GLOB | Kind.SYMBOL:  # a glob or a name, as written
            return value
        case _:  # mypy proves every kind is read above
            assert_never(kind)


def _level(names: dict[str, str], field: str, value: str, position: int, known: str) -> str:
    level = names.get(value.lower())
    if level is None:
        raise QueryError(
            f"unknown {field} '{value}'",
            position,
            known,
            key="query_level",
            params={"field": field, "value": value, "known": known},
        )
    return level


def _time(value: str, position: int) -> str:
    lowered = value.lower()
    if _AGE.fullmatch(lowered):
        return lowered
    if _DATE.fullmatch(value):
        try:
            date.fromisoformat(value)
        except ValueError:
            pass
        else:
            return value
    raise QueryError(
        f"bad date '{value}'", position, DATE_HINT, key="query_date", params={"value": value}
    )


def _number(op: str, value: str, position: int) -> str:
    if _NUMBER.fullmatch(value):
        return str(int(value))
    found = _RANGE.fullmatch(value)
    if found is None or (not found.group(1) and not found.group(2)):
        raise QueryError(
            f"bad number '{value}'",
            position,
            NUMBER_HINT,
            key="query_number",
            params={"value": value},
        )
    if op != ":":
        raise QueryError(
            f"bad number '{value}'",
            position,
            "a range takes ':'",
            key="query_range_colon",
            params={"value": value},
        )
    low, high = (str(int(part)) if part else "" for part in found.groups())
    if low and high and int(low) > int(high):
        raise QueryError(
            f"bad range '{value}'",
            position,
            f"use {high}..{low}",
            key="query_range_order",
            params={"value": value, "fixed": f"{high}..{low}"},
        )
    return f"{low}..{high}"


def number_bounds(op: str, value: str) -> tuple[int | None, int | None]:
    """The inclusive [low, high] a number term accepts (None: no bound)."""
    if ".." in value:
        low, high = value.split("..")
        return (int(low) if low else None), (int(high) if high else None)
    number = int(value)
    return {
        ":": (number, number),
        ">=": (number, None),
        ">": (number + 1, None),
        "<=": (None, number),
        "<": (None, number - 1),
    }[op]


# What each operator of an ordered field means (the evaluator's ranks and the store's SQL).
COMPARE: Final[dict[str, Callable[[Any, Any], Any]]] = {
    ":": operator.eq,
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}


def level_accepts(order: tuple[str, ...], op: str, value: str, level: str | None) -> bool:
    """Whether a report's `level` (None: unknown) satisfies `op value` in `order`."""
    if level is None or level not in order:
        return False
    return bool(COMPARE[op](order.index(level), order.index(value)))


def time_bound(value: str, now: datetime) -> datetime:
    """The instant `since:`/`before:` compare with: `now` minus an age, or a date's UTC
    midnight."""
    age = _AGE.fullmatch(value)
    if age is not None:
        return as_utc(now) - int(age.group(1)) * _AGE_UNITS[age.group(2)]
    day = date.fromisoformat(value)
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def as_utc(moment: datetime) -> datetime:
    """A naive datetime is UTC (as the store keeps it)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
