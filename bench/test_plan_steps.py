"""bench.plan.steps: every step of a batch is timed, and put back afterwards."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from bench.plan import steps as plan_steps


def test_a_small_tick_is_broken_down_by_step_and_statement(tmp_path: Path) -> None:
    originals = [getattr(owner, name) for _, owner, name in plan_steps.STEPS]
    found = asyncio.run(plan_steps.profile(f"sqlite:///{tmp_path / 'plan.db'}", 200, 20))
    assert found["runs"] == 200
    steps, statements = found["steps"], found["statements"]
    for label, _, _ in plan_steps.STEPS:  # one batch of 200 destinations: each step ran
        assert steps.calls[label] >= 1, label
    assert steps.calls["  render"] == 20  # one edition per audience
    top = [label for label, _, _ in plan_steps.STEPS if not label.startswith(" ")]
    assert sum(steps.seconds[label] for label in top) <= found["seconds"]
    assert any(text.startswith("INSERT INTO outbox") for text in statements.seconds)
    if hasattr(time, "pthread_getcpuclockid"):  # (per-thread CPU clocks: Linux, not macOS)
        assert found["threads"][threading.main_thread().name] > 0  # the event loop's planned
    assert found["server_cpu_s"] is None  # (SQLite runs inside the process)
    lines = plan_steps.report(found)
    assert any(line.startswith("event loop thread ") for line in lines)
    assert lines[0].startswith("one tick: 200 runs in ")
    assert any(line.startswith("  render ") for line in lines)
    # the wrappers are gone: the code plans as it did
    assert [getattr(owner, name) for _, owner, name in plan_steps.STEPS] == originals
