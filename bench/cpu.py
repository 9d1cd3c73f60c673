"""CPU seconds a benchmark spent: this process's (every thread), and the local PostgreSQL
server's (every `postgres` process /proc shows: its backends, WAL writer, checkpointer).

A tick's wall time can be no shorter than all the CPU it needs divided by the machine's CPUs,
so the planning figures show both beside the seconds."""

from __future__ import annotations

import os
import time
from pathlib import Path

PROC = Path("/proc")


def process_cpu() -> float:
    """CPU seconds of this process so far, its threads included."""
    return time.process_time()


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


def spent(before: float | None, after: float | None) -> float | None:
    """Seconds between two readings, rounded; None when either is missing."""
    return None if before is None or after is None else round(after - before, 2)
