"""Helpers for the fault suite (no tests here).

Every fault test runs twice from one body: a short sample in the normal suite (`make test`; the
samples of the tests marked `slow` only with `SLOW=1`, as CI runs them) and the full count under
`pytest -m faults`. `FAULT_SCALE` multiplies the full counts (0.1 for a
rehearsal of the long suite).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

FAULT_SCALE = float(os.environ.get("FAULT_SCALE", "1"))


def counts(sample: int, full: int) -> list[Any]:
    """Parameters for `count`: the sample runs by default, the full count only with -m faults."""
    return [
        pytest.param(sample, id=f"sample-{sample}"),
        pytest.param(max(1, int(full * FAULT_SCALE)), id=f"full-{full}", marks=pytest.mark.faults),
    ]


def report_line(name: str, **figures: object) -> str:
    """One line a fault run prints (shown with -s, or in the failure message)."""
    shown = ", ".join(f"{key}={value}" for key, value in figures.items())
    return f"[fault suite] {name}: {shown}"


def first_failures(check: Callable[[], None], failures: list[str], keep: int = 5) -> None:
    """Run `check`; keep the first few AssertionError messages instead of stopping at one."""
    try:
        check()
    except AssertionError as error:
        if len(failures) < keep:
            failures.append(str(error)[:500])
        else:
            failures.append("")
