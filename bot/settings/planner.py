"""Where a tick plans its digests (`delivery.planner`; bot/scheduling/planner.py)."""

from __future__ import annotations

from enum import StrEnum


class PlannerMode(StrEnum):
    AUTO = "auto"  # the event loop, then a process of its own once a tick reads many destinations
    LOOP = "loop"  # always the service's event loop
    PROCESS = "process"  # always a planning process of its own
