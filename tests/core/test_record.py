"""`record`: made like a plain slotted dataclass, held frozen by the type checker, hashed and
compared by its fields as a frozen dataclass is."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

from mypy import api

from bot.core.record import record


@record
class Point:
    x: int
    y: str = "a"


def test_compares_and_hashes_by_its_fields() -> None:
    assert Point(1) == Point(1, "a")
    assert Point(1) != Point(2)
    assert hash(Point(1, "b")) == hash(Point(1, "b"))
    assert len({Point(1), Point(1), Point(2)}) == 2


def test_is_a_slotted_dataclass() -> None:
    point = Point(3, "z")
    assert dataclasses.is_dataclass(point)
    assert not hasattr(point, "__dict__")
    assert dataclasses.replace(point, y="w") == Point(3, "w")


def test_the_type_checker_refuses_an_assignment(tmp_path: Path) -> None:
    source = tmp_path / "uses_record.py"
    source.write_text(
        textwrap.dedent(
            """
            from bot.core.record import record

            @record
            class Point:
                x: int

            Point(1).x = 2
            """
        ),
        encoding="utf-8",
    )
    out, _, status = api.run([str(source), "--no-incremental", "--follow-imports=silent"])
    assert status == 1, out
    assert 'Property "x" defined in "Point" is read-only' in out
