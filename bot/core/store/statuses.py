"""The values of the `status` columns: a digest run's (`digest_runs`) and an outbox row's."""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class RowStatus(StrEnum):
    """An outbox row (one message of a run) on its way to the platform."""

    PENDING = "pending"  # waiting for its turn (or its next attempt)
    SENDING = "sending"  # claimed by a sender, under a lease
    SENT = "sent"
    FAILED = "failed"  # refused for good, or its destination was deactivated


class RunStatus(StrEnum):
    """A digest run: pending while any of its rows is unfinished."""

    PENDING = "pending"
    DELIVERED = "delivered"
    PARTIAL = "partial"  # finished, but some messages failed for good (see status)
    EMPTY = "empty"  # nothing to send: finished when planned


# The rows still to be sent: a run with one of them is not finished.
UNFINISHED: Final = (RowStatus.PENDING.value, RowStatus.SENDING.value)
