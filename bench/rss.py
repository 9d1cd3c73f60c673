"""A process's peak resident memory, as the kernel keeps it (VmHWM in /proc).

Not `getrusage`'s maxrss: Linux carries that over an exec, so a benchmark started from a big
parent would report the parent's peak.
"""

from __future__ import annotations

from pathlib import Path


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc status")
