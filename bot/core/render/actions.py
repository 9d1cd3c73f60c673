"""What a digest's buttons carry, on every platform: `read:REF`, `snooze:REF`, `mute:TAG`,
`report:REF`, `more:RUN`, in Slack `readall:ROW` (mark every PR of a message read: the
question a ✅ reaction asks), and in Telegram `menu:REF` (the ⋯ button that opens an entry's
menu in the keyboard; it never reaches the application layer) and `sec:REF:SECTION:PAGE` (a
full report's section or page, or `dm` for SECTION: send the report privately; the adapter
answers it too). Telegram sends it back as `callback_data` (at most 64 bytes), Slack as the
element's `value` (buttons and overflow options alike, with an action_id that starts with
ENTRY_ACTION_PREFIX).

A pressed value is checked here, once for both platforms, before anything acts on it: the
platform hands back whatever the client sent, so a forged or garbled value (a 5,000-digit
key, another script's digits, a 3,000-character tag) is refused with a log line. A REF is
`owner/repo#7422` or `7422`, a RUN ASCII digits, a TAG at most what the store keeps of one;
the bounds are the store's columns' (bot/core/store/bounds.py).
"""

from __future__ import annotations

import logging
import re
from enum import StrEnum
from typing import Final

from bot.core.digest.filter_query import fold
from bot.core.logs import log
from bot.core.models import Section
from bot.core.store.bounds import max_chars, max_int
from bot.core.store.sql.tables import (
    digest_runs,
    edition_entries,
    outbox,
    reading_marks,
    reports,
)

logger = logging.getLogger("prdigest.actions")

ENTRY_ACTION_PREFIX = "entry:"  # Slack action_id of every digest button ("entry:read", …)
KEY_MAX: Final = max_int(digest_runs.c.edition_id)  # what `more:` carries: an edition's id
ROW_MAX: Final = max_int(outbox.c.id)  # what `readall:` carries: a sent message's outbox row
PR_NUMBER_MAX: Final = max_int(reports.c.number)
REPO_MAX: Final = max_chars(reports.c.repo)
TAG_MAX: Final = max_chars(edition_entries.c.tag)  # a Mute button carries an entry's tag
MUTED_MAX: Final = max_chars(reading_marks.c.subject)  # ... and the mark keeps it folded
PAGE_MAX: Final = 9_999  # a report modal's page: far past any report's last
SHOWN_CHARS: Final = 40  # of a refused value, in the log line
_REF: Final = re.compile(r"(?:(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#)?(?P<number>[0-9]+)")


class EntryAction(StrEnum):
    READ = "read"  # mark the PR read in this destination
    SNOOZE = "snooze"  # the PR leaves this destination's digests for a while
    MUTE = "mute"  # the tag (the argument) leaves this destination for a while
    REPORT = "report"  # the full report
    MORE = "more"  # the next page of the same digest run (the argument is the run id)
    # Telegram: opens the entry's menu under its row (REF); the adapter answers it itself
    MENU = "menu"
    # Telegram: a full report's tab or page, `REF:SECTION:PAGE`; the adapter answers it itself
    SECTION = "sec"
    # Slack: "mark all read" under a ✅ reaction on a message of several PRs (the argument is
    # the message's outbox row); the adapter answers it itself
    READALL = "readall"


# A `sec:` press whose SECTION is this sends the report to the presser's private chat.
PRIVATE_COPY: Final = "dm"
# What a `sec:` press may name: every section but `full` (the tabs are the full report).
SECTION_NAMES: Final = frozenset(s.value for s in Section if s is not Section.FULL)


def action_data(action: EntryAction, argument: str) -> str:
    return f"{action.value}:{argument}"


def ascii_number(text: str, largest: int) -> int | None:
    """`text` as a number from 0 to `largest` when it is ASCII digits alone (str.isdigit()
    takes Arabic-Indic and other digits, which int() reads); None otherwise. int() never
    sees more digits than `largest` has."""
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(largest)):
        return None
    value = int(text)
    return value if value <= largest else None


def page_number(text: str) -> int | None:
    """A "Next page" button's page (from 0); None when it is not one."""
    return ascii_number(text, PAGE_MAX)


def section_data(ref: str, section: str, page: int) -> str:
    """What a full report's tab or page button carries: `sec:REF:SECTION:PAGE`."""
    return action_data(EntryAction.SECTION, f"{ref}:{section}:{page}")


def section_argument(argument: str) -> tuple[str, str, int] | None:
    """(REF, SECTION, PAGE) of a `sec:` press, the REF unchecked; None when the SECTION or
    the PAGE is not one a button carries."""
    parts = argument.split(":")
    if len(parts) != 3 or parts[1] not in SECTION_NAMES | {PRIVATE_COPY}:
        return None
    page = page_number(parts[2])
    return None if page is None else (parts[0], parts[1], page)


def argument_problem(action: EntryAction, argument: str) -> str | None:
    """Why `argument` is not what a button of `action` carries; None when it is."""
    match action:
        case EntryAction.SECTION:
            parsed = section_argument(argument)
            if parsed is None:
                return f"not REF:SECTION:PAGE (a section of a report, a page up to {PAGE_MAX})"
            return _ref_problem(parsed[0])
        case EntryAction.MORE:
            key = ascii_number(argument, KEY_MAX)
            return None if key else f"not a digest's key (ASCII digits, 1 to {KEY_MAX})"
        case EntryAction.READALL:
            row = ascii_number(argument, ROW_MAX)
            return None if row else f"not a message's key (ASCII digits, 1 to {ROW_MAX})"
        case EntryAction.MUTE:
            if not argument.strip():
                return "an empty tag"
            if len(argument) > TAG_MAX or len(fold(argument)) > MUTED_MAX:
                return f"a tag longer than {TAG_MAX} characters"
            return None
    return _ref_problem(argument)


def _ref_problem(argument: str) -> str | None:
    found = _REF.fullmatch(argument)
    if found is None:
        return "not a PR reference (owner/repo#7422 or 7422)"
    if len(found["repo"] or "") > REPO_MAX:
        return f"a repository name longer than {REPO_MAX} characters"
    if not ascii_number(found["number"], PR_NUMBER_MAX):
        return f"a PR number out of range (1 to {PR_NUMBER_MAX})"
    return None


def parse_action(data: str) -> tuple[EntryAction, str] | None:
    """The inverse of `action_data`; None when `data` is not a digest action, or when its
    argument is not one a button carries (logged: see the module docstring)."""
    name, colon, argument = data.partition(":")
    if not colon:
        return None
    try:
        action = EntryAction(name)
    except ValueError:
        return None
    problem = argument_problem(action, argument)
    if problem is not None:
        shown = argument[:SHOWN_CHARS]
        fields = {"action": action.value, "problem": problem, "length": len(argument)}
        log(logger, "entry_action.refused", logging.WARNING, value=shown, **fields)
        return None
    return action, argument
