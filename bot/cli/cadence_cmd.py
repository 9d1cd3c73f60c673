"""`prdigest cadence test EXPR [--tz ZONE] [--from ISO] [--count N] [--format text|json]`:
the coming fire times of a cadence, as `systemd-analyze calendar --iterations` shows them.

EXPR is what `cadence:` and `/pr subscribe … at` take: a 5-field cron, `daily 09:00`,
`workdays 09:30`, `weekly fri 17:00`, `now`. `--channel NAME` takes a config channel's cadence
(unless EXPR is given), zone and calendar: its holidays, days off and quiet hours hold fires as
the scheduler does (an `urgent: true` channel's ignore the quiet hours, a `holidays: false`
one's the holidays). Each fire has a note when something moved it (a holiday, quiet hours, a
DST change): bot/core/timing/upcoming.py.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.cli.common import CliError, Command, print_json_lines
from bot.core import clock
from bot.core.calendar import WorkingCalendar
from bot.core.timing.cadence import CadenceError, parse_cadence
from bot.core.timing.cron import CronError, next_fire
from bot.core.timing.upcoming import MAX_COUNT, Fire, fires
from bot.service.context import load

DEFAULT_COUNT = 10
DEFAULT_ZONE = "UTC"


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["test"], help="test: list the coming fire times")
    parser.add_argument(
        "expr", nargs="?", metavar="EXPR", help="'0 9 * * mon-fri', 'daily 09:00', 'now', …"
    )
    parser.add_argument("--tz", help=f"IANA zone (default: the channel's, else {DEFAULT_ZONE})")
    parser.add_argument("--from", dest="start", metavar="ISO", help="start (default: now)")
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT, help="fires to list")
    parser.add_argument("--format", choices=("text", "json"), default="text", dest="fmt")
    parser.add_argument("--channel", metavar="NAME", help="a config channel: its calendar too")


def _zone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise CliError(
            f"unknown time zone {name!r} (use an IANA name like Asia/Shanghai)"
        ) from None
    return name


def _start(text: str | None, zone: str) -> datetime:
    """`--from`: an ISO time; one without an offset is read in `zone`."""
    if text is None:
        return clock.utc_clock()
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise CliError(
            f"--from {text!r} is not an ISO time (e.g. 2026-03-08T00:00:00-05:00)"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=ZoneInfo(zone))


@dataclass(frozen=True, slots=True)
class _Channel:
    """A config channel as `--channel` reads it."""

    cadence: str
    zone: str
    calendar: WorkingCalendar  # the one that holds it: an urgent one's has no quiet hours
    route: str  # what its `urgent:` / `holidays:` switches drop of its destination's calendar
    shown: WorkingCalendar  # its destination's, as printed


def _channel(name: str) -> _Channel:
    """The config channel `name`: its cadence, zone and calendars."""
    _, config = load()
    for channel in config.channels:
        if channel.name == name:
            zone, book = config.channel_timezone(channel), config.calendars()
            shown = book.for_destination(channel.platform, channel.target, zone)
            own = book.for_destination(
                channel.platform, channel.target, zone, channel.urgent, channel.holidays
            )
            route = shown.route_text(channel.urgent, channel.holidays)
            return _Channel(channel.cadence or channel.schedule, zone, own, route, shown)
    known = ", ".join(channel.name for channel in config.channels) or "none"
    raise CliError(f"no channel {name!r} in the config (channels: {known})")


async def _handle(args: argparse.Namespace) -> int:
    calendar: WorkingCalendar | None = None
    expr, zone, chosen = args.expr, DEFAULT_ZONE, None
    if args.channel is not None:
        chosen = _channel(args.channel)
        expr, zone, calendar = expr or chosen.cadence, chosen.zone, chosen.calendar
    if not expr:
        raise CliError("give a cadence (e.g. '0 9 * * mon-fri', 'daily 09:00') or --channel")
    if not 1 <= args.count <= MAX_COUNT:
        raise CliError(f"--count {args.count} is out of range 1-{MAX_COUNT}")
    zone = _zone(args.tz or zone)
    start = _start(args.start, zone)
    try:
        cadence = parse_cadence(expr, next_fire=next_fire, now=start)
        listed = (
            []
            if cadence.cron is None
            else list(fires(cadence.cron, zone, start, args.count, calendar))
        )
    except (CadenceError, CronError) as exc:
        raise CliError(str(exc).removeprefix("cadence: ")) from None
    if args.fmt == "json":
        print_json_lines({"at": f.at.isoformat(), "local": f.local, "note": f.note} for f in listed)
        return 0
    _print_text(cadence.text, cadence.cron, zone, chosen, listed)
    return 0


def _print_text(
    text: str, cron: str | None, zone: str, chosen: _Channel | None, listed: list[Fire]
) -> None:
    print(f"cadence:  {text}" + (f"  (cron {cron})" if cron is not None and cron != text else ""))
    print(f"zone:     {zone}")
    if chosen is not None and not chosen.shown.always:
        print(f"calendar: {chosen.shown.describe()}")
    if chosen is not None and chosen.route:
        print(f"route:    {chosen.route}")
    if cron is None:
        print("posts each matching PR as it arrives: no fire times")
        return
    if not listed:
        print("no fire on working time within a year (see the calendar)")
    for fire in listed:
        print(f"  {fire.at.isoformat()}  {fire.local}" + (f"  {fire.note}" if fire.note else ""))


COMMAND = Command(
    "cadence",
    "list a cadence's fire times: cadence test EXPR [--tz ZONE] [--from ISO] [--count N]",
    _configure,
    _handle,
)
