"""The pickers' cadence wording, typed back: `every day at 09:00`, `每天 09:00` -> `daily 09:00`.

Slack's modal and Telegram's keyboard show each cadence in the reader's language
(bot.core.render.picker_labels, keys `cadence_daily 09:00` ...). Whoever reads a label and types
it after `subscribe ... at` gets the cadence it labels, and the canonical text is what is stored
and echoed. Two sources, both read by `canonical_cadence`:
- the label table itself: each `cadence_*` label, in every locale, with the key's clock read as
  any clock (`every day at 07:15` is `daily 07:15` as the label says `every day at 09:00`), so a
  changed label is accepted as soon as it is shown;
- GENERAL: the patterns the labels stand for but do not show (the other weekdays, `周X`,
  `at once`).
Text is compared after NFKC (full-width digits and colon), case-insensitively, with any run of
whitespace as one optional space. A clock is taken as any word: `parse_cadence` checks it and
names a bad one (`every day at noon`: bad time 'noon').
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Final

from bot.core.models import Locale
from bot.core.render.picker_labels import picker_keys, picker_label
from bot.core.timing.schedules import HHMM

LABEL_PREFIX: Final = "cadence_"  # picker_labels' key of a cadence: `cadence_` + its canonical text
CLOCK: Final = r"(?P<clock>(?!at\b)\S+)"  # any word but `at`: `daily at` stays unread
# A weekday as the wording names it -> its name in a canonical cadence (`weekly fri 17:00`).
DAYS: Final = {
    "monday": "mon", "tuesday": "tue", "wednesday": "wed", "thursday": "thu",
    "friday": "fri", "saturday": "sat", "sunday": "sun",
    "一": "mon", "二": "tue", "三": "wed", "四": "thu", "五": "fri", "六": "sat",
    "日": "sun", "天": "sun",
}  # fmt: skip
_EN_DAY: Final = "|".join(day for day in DAYS if day.isascii())
_ZH_DAY: Final = "".join(day for day in DAYS if not day.isascii())
# (pattern, canonical template): a space in a pattern is an optional space; `{clock}` and `{day}`
# are the clock and a weekday, in a template what they matched (the day as DAYS names it).
GENERAL: Final[tuple[tuple[str, str], ...]] = (
    (r"(?:every day|daily) (?:at )?{clock}", "daily {clock}"),
    (r"(?:every )?workdays? (?:at )?{clock}", "workdays {clock}"),
    (rf"(?:every )?(?P<day>{_EN_DAY})s? (?:at )?{{clock}}", "weekly {day} {clock}"),
    (r"(?:at )?once(?:, as prs arrive)?|as prs arrive", "now"),
    (r"(?:每天|每日) {clock}", "daily {clock}"),
    (r"(?:每个)?工作日 {clock}", "workdays {clock}"),
    (rf"每?(?:周|星期)(?P<day>[{_ZH_DAY}]) {{clock}}", "weekly {day} {clock}"),
    (r"立即|实时", "now"),
)

Alias = tuple[re.Pattern[str], str]  # (what is typed, the canonical cadence it stands for)


def canonical_cadence(text: str) -> str | None:
    """The canonical cadence (`daily 09:00`, `weekly fri 17:00`, `now`) that the pickers'
    wording in `text` stands for; None when `text` is not such wording (it is then read as a
    cadence is written: a cron, `daily 09:00` ...). The clock is as typed, unchecked."""
    typed = _fold(text)
    for pattern, template in _aliases():
        match = pattern.fullmatch(typed)
        if match is not None:
            return _fill(template, match)
    return None


def _fold(text: str) -> str:
    """NFKC (`０９：００` -> `09:00`, `（` -> `(`) with whitespace runs as one space."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


@functools.cache
def _aliases() -> tuple[Alias, ...]:
    """The labels' patterns first (they are what people copy), then GENERAL's."""
    labels = [
        _label_alias(_fold(picker_label(key, locale)), key.removeprefix(LABEL_PREFIX))
        for locale in Locale
        for key in sorted(picker_keys())
        if key.startswith(LABEL_PREFIX)
    ]
    general = [(_compile(pattern.replace("{clock}", CLOCK)), t) for pattern, t in GENERAL]
    return (*labels, *general)


def _label_alias(label: str, canonical: str) -> Alias:
    """A label as a pattern: its words in order, and the key's clock (`09:00` of `daily 09:00`)
    any clock wherever the label shows it; a label that shows no clock means the key as is."""
    clock = canonical.rsplit(maxsplit=1)[-1]
    pattern = " ".join(re.escape(word) for word in label.split())
    if HHMM.match(clock) is None or clock not in label:
        return _compile(pattern), canonical
    template = canonical.removesuffix(clock) + "{clock}"
    return _compile(pattern.replace(re.escape(clock), CLOCK, 1)), template


def _compile(pattern: str) -> re.Pattern[str]:
    """A space in a pattern is optional (`每天09:00`, `everyday at 09:00`); case is ignored."""
    return re.compile(pattern.replace(" ", " ?"), re.IGNORECASE)


def _fill(template: str, match: re.Match[str]) -> str:
    """The template with what the pattern matched: `weekly {day} {clock}` -> `weekly fri 17:00`."""
    found = match.groupdict()
    day = DAYS.get((found.get("day") or "").lower(), "")
    return template.format(clock=found.get("clock") or "", day=day)
