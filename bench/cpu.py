"""CPU seconds a benchmark spent: this process's (every thread), and the local PostgreSQL
server's (every `postgres` process /proc shows: its backends, WAL writer, checkpointer).

A tick's wall time can be no shorter than all the CPU it needs divided by the machine's CPUs,
so the planning figures show both beside the seconds."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

PROC = Path("/proc")


def process_cpu() -> float:
    """CPU seconds of this process so far, its threads included."""
    return time.process_time()


def thread_cpu() -> dict[str, float]:
    """CPU seconds of each running thread of this process so far, by thread name; empty where
    the platform has no per-thread CPU clock."""
    found = {}
    for thread in threading.enumerate():
        try:
            clock = time.pthread_getcpuclockid(thread.ident or 0)
            found[thread.name] = time.clock_gettime(clock)
        except (AttributeError, OSError):  # (no such clock here; a thread that just ended)
            continue
    return found


def postgres_cpu() -> float | None:
    """CPU seconds of the `postgres` processes running now; None where /proc shows none (no
    /proc, or a server on another machine)."""
    if not PROC.is_dir():
        return None
    ticks, found = 0, False
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if not (entry / "cmdline").read_bytes().startswith(b"postgres"):
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # (a process that ended meanwhile)
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
        found = True
    return ticks / os.sysconf("SC_CLK_TCK") if found else None


def server_cpu(engine: Any) -> float | None:
    """`postgres_cpu()` for a PostgreSQL engine; None for SQLite, which runs inside the
    process (its CPU is the process's)."""
    return postgres_cpu() if engine.dialect.name == "postgresql" else None


def spent(before: float | None, after: float | None) -> float | None:
    """Seconds between two readings, rounded; None when either is missing."""
    return None if before is None or after is None else round(after - before, 2)


# The reference workload's size: about half a second here, in slices small enough (a few MB)
# not to raise the peak RSS a tick is measured by.
REFERENCE_SLICES, REFERENCE_ROWS = 20, 10_000


def _reference_work() -> int:
    """A fixed pure-Python workload of the kind a tick does: tuples built, grouped in a dict,
    sorted by a key, strings joined."""
    done = 0
    for _ in range(REFERENCE_SLICES):
        rows = [(i % 97, f"tag{i % 13}", i) for i in range(REFERENCE_ROWS)]
        groups: dict[tuple[int, str], list[int]] = {}
        for key, tag, seq in rows:
            groups.setdefault((key, tag), []).append(seq)
        rows.sort(key=lambda row: (row[1], -row[2]))
        done += len(groups) + len(",".join(tag for _, tag, _ in rows))
    return done


def reference_seconds(repeats: int = 3) -> float:
    """The fastest of `repeats` timings of the reference workload: how fast this machine runs
    Python at the moment. The machines here share their CPUs, and a tick's seconds move with
    their speed (which can change by half within a minute)."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        _reference_work()
        best = min(best, time.perf_counter() - started)
    return round(best, 3)
