"""`prdigest cadence test` against croniter: 50 cadences × 4 zones × every clock change of 2026
and 2027. Where the two differ, the difference must be one of bot/core/timing/cron.py's written
conventions (docs/calendar.md), named here; anything else fails.

croniter is the reference because it is the most used Python cron library; it differs from
crontab on purpose in the places these conventions name (it fires a fixed time twice in a
repeated hour, moves an interval slot that does not exist to the gap's end, and reads a
leading `*` in the day of month as a restriction).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo

import pytest
from croniter import croniter
from cronsim import CronSim

from bot.cli import main
from bot.core.timing.cron import is_fixed_time, normalize

CADENCES = (
    # fixed times, some inside the gap or the repeated hour of some zone
    "0 0 * * *", "30 2 * * *", "0 2 * * *", "30 1 * * *", "0 3 * * *", "0 9 * * *",
    "45 23 * * *", "15 2 * * *", "0,30 2 * * *", "0 1-3 * * *", "0 2-3 * * *", "30 3 * * *",
    "0 12 * * *", "59 1 * * *", "0 0-23/6 * * *", "* 2 * * *", "*/10 1-3 * * *",
    "*/30 1-3 * * *", "*/20 9-17 * * *",
    # the day of week as crontab counts it
    "0 9 * * mon-fri", "0 9 * * 1-5", "0 9 * * */2", "0 9 * * 1-5/2", "0 9 * * 1#2",
    "0 9 * * 0-3", "0 9 * * sun-wed", "0 9 * * fri-mon", "0 9 * * 0", "0 9 * * 7",
    "30 2 * * sun", "0 9 * * sat,sun", "0 17 * * fri", "0 9 * * 5L", "0 9 * * 0#1",
    "0 0 * * 0", "0 9 * * mon#1",
    # days of the month
    "0 0 1 * *", "0 9 L * *", "0 2 1 * *", "0 9 13 * fri", "0 9 1,15 * *", "0 9 */2 * mon",
    "0 9 1 1,4,7,10 *",
    # intervals: every real slot
    "*/30 * * * *", "*/15 * * * *", "0 * * * *", "30 * * * *", "0 */2 * * *", "0 */3 * * *",
    "5 */1 * * *",
)  # fmt: skip
ZONES = ("America/New_York", "Europe/Berlin", "Australia/Sydney", "Australia/Lord_Howe")
YEARS = (2026, 2027)
CRONITER_SPELLING = {"5L": "L5"}  # croniter writes the last Friday `L5`: a spelling, not a rule
SAMPLE = ("30 2 * * *", "0 1-3 * * *", "*/30 * * * *", "0 */2 * * *", "0 9 * * */2",
          "0 9 */2 * mon", "0 0 1 * *", "0 9 * * 1-5/2")  # fmt: skip
MAX_FIRES = 200
SECOND = timedelta(seconds=1)


@cache
def clock_changes(zone: str) -> tuple[datetime, ...]:
    """The first instant of each clock change in YEARS (UTC)."""
    tz, found = ZoneInfo(zone), []
    moment = datetime(YEARS[0], 1, 1, tzinfo=UTC)
    while moment.year <= YEARS[-1]:
        step = moment + timedelta(hours=1)
        was = moment.astimezone(tz).utcoffset()
        if step.astimezone(tz).utcoffset() != was:
            change = moment
            while change.astimezone(tz).utcoffset() == was:
                change += timedelta(minutes=1)
            found.append(change)
        moment = step
    return tuple(found)


def wall_matches(cron: str, at: datetime) -> bool:
    wall = at.replace(tzinfo=None)
    return next(CronSim(normalize(cron), wall - SECOND), None) == wall


# The conventions: each takes (cron, the differing fire in its zone, our fires) ----------------


def repeated_hour_fires_once(cron: str, at: datetime, ours: set[datetime]) -> bool:
    """A schedule with fixed hours fires once in a repeated hour, at the first pass: croniter's
    extra fire is the second pass of a time we fired at its first."""
    first = at.replace(fold=0)
    return (
        is_fixed_time(cron)
        and at.fold == 1
        and first.utcoffset() != at.utcoffset()
        and first.astimezone(UTC) in ours
    )


def interval_has_no_fire_in_the_gap(cron: str, at: datetime, ours: set[datetime]) -> bool:
    """An interval schedule fires at real instants whose wall clock matches: croniter moves a
    slot of the hour that does not exist to the gap's end, where the wall clock does not
    match."""
    before = (at.astimezone(UTC) - SECOND).astimezone(at.tzinfo)
    gap_end = (before.utcoffset() or timedelta(0)) < (at.utcoffset() or timedelta(0))
    return not is_fixed_time(cron) and gap_end and not wall_matches(cron, at)


def leading_star_days_must_both_match(cron: str, at: datetime, ours: set[datetime]) -> bool:
    """A day-of-month field with a leading `*` (`*/2`) is unrestricted, as in cron: both day
    fields must match; croniter fires on days matching either."""
    minute, hour, dom, month, dow = cron.split()
    if not (dom.startswith("*") and dom != "*" and dow != "*"):
        return False
    by_dom = wall_matches(f"{minute} {hour} {dom} {month} *", at)
    by_dow = wall_matches(f"{minute} {hour} * {month} {dow}", at)
    return by_dom != by_dow


CONVENTIONS: dict[str, Callable[[str, datetime, set[datetime]], bool]] = {
    "repeated hour: fixed hours fire once": repeated_hour_fires_once,
    "spring gap: an interval slot that does not exist has no fire": interval_has_no_fire_in_the_gap,
    "a leading '*' leaves the day of month unrestricted": leading_star_days_must_both_match,
}


def theirs(cron: str, zone: str, start: datetime, until: datetime) -> list[datetime]:
    spelled = " ".join(CRONITER_SPELLING.get(field, field) for field in cron.split())
    walk = croniter(spelled, start.astimezone(ZoneInfo(zone)))
    found: list[datetime] = []
    while len(found) < MAX_FIRES and (not found or found[-1] <= until or len(found) < 3):
        found.append(walk.get_next(datetime).astimezone(UTC))
    return found


def ours(
    capsys: pytest.CaptureFixture[str], cron: str, zone: str, start: datetime, count: int
) -> list[datetime]:
    args = ["cadence", "test", cron, "--tz", zone, "--from", start.isoformat()]
    assert main([*args, "--count", str(count), "--format", "json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    return [datetime.fromisoformat(json.loads(line)["at"]) for line in lines]


def compare(capsys: pytest.CaptureFixture[str], cron: str, zone: str) -> list[str]:
    """What differs from croniter around each clock change that no convention explains."""
    unexplained, tz = [], ZoneInfo(zone)
    lead = timedelta(hours=3 if cron.split()[0].startswith("*") else 50)
    for change in clock_changes(zone):
        start = change - lead + 7 * SECOND  # off any fire: croniter starts after, we at
        reference = theirs(cron, zone, start, change + lead)
        fired = ours(capsys, cron, zone, start, len(reference))
        assert all(f.utcoffset() == f.astimezone(tz).utcoffset() for f in fired), "real offsets"
        horizon = min(reference[-1], fired[-1])
        mine = {f.astimezone(UTC) for f in fired if f <= horizon}
        ref = {f for f in reference if f <= horizon}
        for at in sorted(mine ^ ref):
            local = at.astimezone(tz)
            named = [name for name, rule in CONVENTIONS.items() if rule(cron, local, mine)]
            if not named or at in mine:  # every convention removes a croniter fire
                side = "only ours" if at in mine else "only croniter's"
                unexplained.append(f"{cron!r} {zone} {local.isoformat()}: {side}")
    return unexplained


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("cron", SAMPLE)
def test_a_sample_of_the_grid_differs_from_croniter_only_by_the_conventions(
    capsys: pytest.CaptureFixture[str], cron: str, zone: str
) -> None:
    assert compare(capsys, cron, zone) == []


@pytest.mark.slow
@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("cron", [c for c in CADENCES if c not in SAMPLE])
def test_the_grid_differs_from_croniter_only_by_the_conventions(
    capsys: pytest.CaptureFixture[str], cron: str, zone: str
) -> None:
    assert compare(capsys, cron, zone) == []


def test_the_grid_is_50_cadences_and_each_convention_is_met_somewhere(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The conventions are not dead letters: each explains a real difference in the sample."""
    assert len(CADENCES) == 50 and set(SAMPLE) <= set(CADENCES)
    used = set()
    for cron in ("0 1-3 * * *", "0 */2 * * *", "0 9 */2 * mon"):
        zone = "America/New_York"
        change = clock_changes(zone)[0 if cron == "0 */2 * * *" else 1]
        start = change - timedelta(hours=50) + 7 * SECOND
        reference = theirs(cron, zone, start, change + timedelta(hours=50))
        mine = {f.astimezone(UTC) for f in ours(capsys, cron, zone, start, len(reference))}
        for at in set(reference) - mine:
            local = at.astimezone(ZoneInfo(zone))
            used |= {name for name, rule in CONVENTIONS.items() if rule(cron, local, mine)}
    assert used == set(CONVENTIONS)
