"""`record`: an immutable value class for the ones a tick makes by the hundred thousand.

A frozen dataclass's `__init__` sets each field through `object.__setattr__`, a call per
field: a `Subscription` (26 fields) takes 3.7 µs to make, against 0.36 µs for the same class
unfrozen, and a tick over 100,000 subscriptions makes one of each, and a run, a due item, a
planned result, entries and message pieces beside. A `record` is a slotted dataclass that
type checkers hold frozen (mypy refuses an assignment to a field, as it does a frozen
dataclass's) and that hashes and compares by its fields as a frozen one does; at run time
its `__init__` is a plain one. The classes made in bulk use it; the others stay frozen
dataclasses, which also refuse an assignment at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar, dataclass_transform

T = TypeVar("T")


@dataclass_transform(frozen_default=True, eq_default=True)
def record(cls: type[T]) -> type[T]:
    """`cls` as a slotted dataclass, frozen to type checkers, hashed by its fields."""
    return dataclass(slots=True, unsafe_hash=True)(cls)
