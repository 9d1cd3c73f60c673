"""When a subscription posts: a cron, a shorthand people say, or `now`.

`parse_cadence` reads what a user types after `at` in `/pr subscribe QUERY at CADENCE` and what
a config's `cadence:` holds:
- a 5-field cron: `0 9 * * mon-fri`;
- `daily 09:00`, `workdays 09:30` (mon-fri), `weekly fri 17:00` (`friday` too): each means
  one cron (`daily 09:00` is `0 9 * * *`), so the scheduler only ever runs crons;
- `now`: a matching PR is posted once, when it arrives (no fire times);
- the pickers' wording, typed back (`every day at 09:00`, `每天 09:00`, `Fridays at 17:00`,
  `立即`: bot.core.timing.cadence_words): read as the canonical cadence it stands for, which is what
  `Cadence.text` holds, so what is stored and echoed is `daily 09:00`;
- a clock time, as `/schedule` and the config's `schedule:` read it: `09:00` is `0 9 * * *`,
  `09:00 mon-fri` is `0 9 * * mon-fri`. `schedule:` and `cadence:` take the same words.

Fire times come from the cron engine as a function (`NextFire`: `cron.next_fire`), so a
test can give its own. The same engine checks the cron when it is parsed, so a cron that
never fires (`0 9 31 2 *`) is refused here, as the config and the scheduler refuse it.

Every error is a CadenceError whose message names what was wrong and how to write it.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, Literal

from bot.core.timing.cadence_words import canonical_cadence
from bot.core.timing.horizon import NextFire
from bot.core.timing.schedules import HHMM, clock_cron, schedule_cron

# (cron, timezone, after) -> the first fire time >= after; ValueError if the cron is invalid
# or never fires (bot.core.timing.cron.next_fire, whose CronError is a ValueError).
CadenceKind = Literal["cron", "now"]

CRON_FIELDS: Final = 5
WORKDAYS: Final = "mon-fri"
VALIDATION_ZONE: Final = "UTC"  # a cron fires within a year in every zone or in none
DAY_NAMES: Final = {
    "mon": "monday",
    "tue": "tuesday",
    "wed": "wednesday",
    "thu": "thursday",
    "fri": "friday",
    "sat": "saturday",
    "sun": "sunday",
}
FORMS: Final = (
    "use a cron like '0 9 * * mon-fri', 'daily 09:00', 'workdays 09:30', "
    "'weekly fri 17:00' or 'now'"
)
# shorthand -> (how it is written, an example)
SHORTHANDS: Final = {
    "daily": ("daily HH:MM", "daily 09:00"),
    "workdays": ("workdays HH:MM", "workdays 09:30"),
    "weekly": ("weekly DAY HH:MM", "weekly fri 17:00"),
    "now": ("now", "now"),
}


class CadenceError(ValueError):
    """A cadence that cannot be read; the message says how to write one. `str(error)` is the
    English line (the CLI's); `key` and `params` name it for a chat's language
    (labels.error_text)."""

    def __init__(self, message: str, *, key: str = "", params: Mapping[str, str] | None = None):
        super().__init__(message)
        self.key = key
        self.params = dict(params or {})


@dataclass(frozen=True, slots=True)
class Cadence:
    """A parsed cadence. `cron` is what the scheduler runs (None for `now`); `text` is the
    cadence as a user would write it back (`daily 09:00`, `0 9 * * mon-fri`, `now`)."""

    kind: CadenceKind
    cron: str | None
    text: str
    fires: NextFire | None = field(default=None, repr=False, compare=False)

    def next_fire(self, after: datetime, tz: str) -> datetime | None:
        """The first fire time >= `after` in zone `tz`; None for `now`, which has none
        (its PRs are posted as they arrive)."""
        if self.cron is None or self.fires is None:
            return None
        return self.fires(self.cron, tz, after)


NOW: Final = Cadence(kind="now", cron=None, text="now")


def parse_cadence(text: str, *, next_fire: NextFire, now: datetime) -> Cadence:
    """Read a cadence; a cron is checked with `next_fire` from `now` (it must fire within
    the engine's horizon, a year). The pickers' wording is read as its canonical cadence."""
    text = canonical_cadence(text) or text
    words = text.split()
    head = words[0].lower() if words else ""
    if head in SHORTHANDS:
        cron, canonical = _shorthand(head, words[1:], text)
        if cron is None:
            return NOW
    elif len(words) == CRON_FIELDS:
        cron = canonical = " ".join(words).lower()
    elif (cron := schedule_cron(" ".join(words).lower())) != " ".join(words).lower():
        canonical = " ".join(words).lower()  # `09:00 mon-fri`, as `schedule:` reads it
    else:
        raise CadenceError(
            f"cadence: '{text.strip()}' is not a cadence ({FORMS})",
            key="cadence_unknown",
            params={"text": text.strip()},
        )
    try:
        next_fire(cron, VALIDATION_ZONE, now)
    except ValueError as exc:
        key: str = getattr(exc, "key", "")  # a CronError says which
        params: Mapping[str, str] = getattr(exc, "params", {})
        raise CadenceError(f"cadence: {exc}", key=key, params=params) from exc
    return Cadence(kind="cron", cron=cron, text=canonical, fires=next_fire)


def is_shorthand(text: str) -> bool:
    """Whether `text` is a shorthand (`daily 09:00` ... `now`) or the pickers' wording for one,
    not a cron or a clock time: a config's `schedule:` in one is read as the same `cadence:`."""
    words = (canonical_cadence(text) or text).split()
    return bool(words) and words[0].lower() in SHORTHANDS


def _shorthand(head: str, rest: list[str], text: str) -> tuple[str | None, str]:
    """(cron, canonical text) of a shorthand; cron None for `now`."""
    form, example = SHORTHANDS[head]
    if len(rest) != len(form.split()) - 1:
        hint = "" if example == form else f", e.g. '{example}'"
        raise CadenceError(
            f"cadence: '{text.strip()}' is written '{form}'{hint}",
            key="cadence_form",
            params={"text": text.strip(), "form": form, "example": example},
        )
    if head == "now":
        return None, "now"
    clock = _clock(rest[-1])
    if head == "daily":
        return _cron(clock, "*"), f"daily {clock}"
    if head == "workdays":
        return _cron(clock, WORKDAYS), f"workdays {clock}"
    day = _day(rest[0])
    return _cron(clock, day), f"weekly {day} {clock}"


def _clock(word: str) -> str:
    """`9:00` -> `09:00`; a CadenceError unless a 24-hour HH:MM time."""
    match = HHMM.match(word)
    if match is None:
        raise CadenceError(
            f"cadence: bad time '{word}' (use HH:MM, 00:00-23:59)",
            key="cadence_time",
            params={"time": word},
        )
    return f"{int(match[1]):02d}:{match[2]}"


def _cron(clock: str, days: str) -> str:
    cron = clock_cron(clock, days)
    assert cron is not None  # _clock checked the time
    return cron


def _day(word: str) -> str:
    """`fri`, `Friday` -> `fri`; an unknown day names the closest one."""
    folded = word.lower()
    for short, full in DAY_NAMES.items():
        if folded in (short, full):
            return short
    spellings = [*DAY_NAMES, *DAY_NAMES.values()]
    close = difflib.get_close_matches(folded, spellings, n=1, cutoff=0.5)
    if close:
        guess = close[0][:3]
        raise CadenceError(
            f"cadence: unknown day '{word}' (did you mean {guess}?)",
            key="cadence_day_guess",
            params={"day": word, "guess": guess},
        )
    days = ", ".join(DAY_NAMES)
    raise CadenceError(
        f"cadence: unknown day '{word}' (use {days})",
        key="cadence_day",
        params={"day": word, "days": days},
    )
