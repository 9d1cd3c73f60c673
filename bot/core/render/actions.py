"""What a digest's buttons carry, on every platform: `read:REF`, `snooze:REF`, `mute:TAG`,
`report:REF`, `more:RUN`. Telegram sends it back as `callback_data` (at most 64 bytes), Slack
as the element's `value` (buttons and overflow options alike, with an action_id that starts
with ENTRY_ACTION_PREFIX)."""

from __future__ import annotations

from enum import StrEnum

ENTRY_ACTION_PREFIX = "entry:"  # Slack action_id of every digest button ("entry:read", …)


class EntryAction(StrEnum):
    READ = "read"  # mark the PR read in this destination
    SNOOZE = "snooze"  # the PR leaves this destination's digests for a while
    MUTE = "mute"  # the tag (the argument) leaves this destination for a while
    REPORT = "report"  # the full report
    MORE = "more"  # the next page of the same digest run (the argument is the run id)


def action_data(action: EntryAction, argument: str) -> str:
    return f"{action.value}:{argument}"


def parse_action(data: str) -> tuple[EntryAction, str] | None:
    """The inverse of `action_data`; None when `data` is not a digest action."""
    name, colon, argument = data.partition(":")
    if not colon or not argument:
        return None
    try:
        return EntryAction(name), argument
    except ValueError:
        return None
