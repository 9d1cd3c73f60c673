"""`prdigest check-config`, `prdigest schema`, `prdigest migrate`.

check-config prints what would run (database, platforms, every query's budget, sources,
channels with their next digest on working time and, under each, its calendar when it has one,
what its `urgent:` / `holidays:` switches drop of it, and the query its
repos/tags/exclude_tags/query filters mean) and then every problem that
would stop `prdigest run`, one line each, exit status 2.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path

from bot.cli.common import CliError, Command
from bot.core import clock
from bot.core.calendar import WorkingCalendar
from bot.core.models import Platform
from bot.core.query import unparse
from bot.core.query.parser import MAX_TERMS
from bot.core.reports.model import Report
from bot.core.store.search import rebuild_index
from bot.core.store.sql.db import DatabaseURLError, async_url, current_revision, masked_url
from bot.core.store.subscriptions.config import channel_query
from bot.core.timing.cron import CronError, next_fire, next_real_fire
from bot.service.context import database_line, load, open_context
from bot.settings import BotConfig, Env
from bot.settings.env_checks import (
    ingest_problems,
    lark_problems,
    lark_warnings,
    slack_problems,
    telegram_problems,
)
from bot.settings.lark import LarkReceive
from bot.settings.values import NOW_SCHEDULE


def _no_args(parser: argparse.ArgumentParser) -> None:
    del parser


def _channel_problems(env: Env, config: BotConfig) -> list[str]:
    found: list[str] = []
    for channel in config.channels:
        where = f"channels.{channel.name}"
        tz = config.channel_timezone(channel)
        try:
            if channel.schedule != NOW_SCHEDULE:
                next_fire(channel.schedule, tz, clock.utc_clock())
        except CronError as exc:
            found.append(f"{where}.schedule: {exc}")
        if channel.platform is Platform.SLACK and not env.slack_enabled:
            found.append(f"{where}.platform: slack, but SLACK_BOT_TOKEN is not set")
        if channel.platform is Platform.TELEGRAM and not env.telegram_enabled:
            found.append(f"{where}.platform: telegram, but TELEGRAM_BOT_TOKEN is not set")
        if channel.platform is Platform.LARK and not env.lark_enabled:
            found.append(f"{where}.platform: lark, but LARK_APP_ID/LARK_APP_SECRET are not set")
    return found


def problems(env: Env, config: BotConfig) -> list[str]:
    """What would stop `prdigest run` from working as configured."""
    found: list[str] = []
    try:
        async_url(env.database_url)
    except DatabaseURLError as exc:
        found.append(str(exc))
    found += _channel_problems(env, config)
    found += slack_problems(env)
    found += telegram_problems(env, config)
    found += lark_problems(env, config)
    found += ingest_problems(env)
    return found


def _platform(name: str, var: str, enabled: bool, trouble: list[str], mode: str) -> str:
    """`slack:     on (HTTP mode)`; never `on` when the errors below say it cannot run."""
    if not enabled:
        state = f"off (no {var})"
    elif trouble:
        state = "cannot run (see the errors below)"
    else:
        state = f"on ({mode})"
    return f"{name + ':':10} {state}"


def _database(env: Env) -> str:
    try:
        return database_line(env)
    except DatabaseURLError:
        return f"database: {masked_url(env.database_url)}"  # the error below says what is wrong


def describe(env: Env, config: BotConfig) -> list[str]:
    now = clock.utc_clock()
    slack_mode = "Socket Mode" if env.slack_app_token else "HTTP mode, POST /slack/events"
    telegram_mode = "webhook" if config.telegram.webhook_url else "long polling"
    lark_mode = (
        "HTTP callbacks, POST /lark/events"
        if config.lark.receive is LarkReceive.WEBHOOK
        else "long connection"
    )
    lines = [
        f"config:    {env.config_path or 'built-in defaults (no config/bot.yaml)'}",
        _database(env),
        f"http:      {env.http_host}:{env.http_port}",
        _platform("slack", "SLACK_BOT_TOKEN", env.slack_enabled, slack_problems(env), slack_mode),
        _platform(
            "telegram",
            "TELEGRAM_BOT_TOKEN",
            env.telegram_enabled,
            telegram_problems(env, config),
            telegram_mode,
        ),
        _platform("lark", "LARK_APP_ID", env.lark_enabled, lark_problems(env, config), lark_mode),
        _platform(
            "ingest API",
            "BOT_INGEST_TOKEN",
            bool(env.ingest_token),
            ingest_problems(env),
            "POST /api/reports",
        ),
    ]
    lines += lark_warnings(env, config)
    lines.append(query_budget(config))
    for source in config.sources:
        line = f"source:    {source.dir or source.url} every {source.interval_seconds}s"
        if source.dir is not None and not source.dir.is_dir():  # `run` works, ingests nothing
            where = "" if source.dir.is_absolute() else f", relative to {Path.cwd()}"
            line += f" (warning: no such directory{where})"
        lines.append(line)
    lines += _subscription_lines(config, now)
    return lines


def query_budget(config: BotConfig) -> str:
    """`queries:   at most 64 terms, 5s each, 4 searches at once (1 per person)`: what a
    search, replay or `subscribe` may cost before it is refused."""
    budget = config.search
    return (
        f"queries:   at most {MAX_TERMS} terms, {budget.timeout_seconds:g}s each, "
        f"{budget.max_concurrent} searches at once ({budget.max_per_user} per person)"
    )


def _subscription_lines(config: BotConfig, now: datetime) -> list[str]:
    """Each config channel (a subscription of its target's destination) with its next fire;
    channels that share a target say so."""
    lines: list[str] = []
    places: dict[tuple[Platform, str], list[str]] = {}
    for channel in config.channels:
        places.setdefault((channel.platform, channel.target), []).append(channel.name)
    calendars = config.calendars()
    for channel in config.channels:
        tz = config.channel_timezone(channel)
        calendar = calendars.for_destination(channel.platform, channel.target, tz)
        # its next fire on its own calendar: an urgent one's ignores the quiet hours
        route = calendars.for_destination(
            channel.platform, channel.target, tz, channel.urgent, channel.holidays
        )
        upcoming = _upcoming(channel.schedule, tz, now, route)
        cadence = channel.cadence or channel.schedule
        others = [n for n in places[(channel.platform, channel.target)] if n != channel.name]
        shared = f" (one destination with {', '.join(others)})" if others else ""
        lines.append(
            f"channel:   {channel.name} → {channel.platform.value}:{channel.target}{shared} "
            f"'{cadence}' {tz}, {upcoming}"
        )
        if not calendar.always:
            lines.append(f"  calendar: {calendar.describe()}")
        if switches := calendar.route_text(channel.urgent, channel.holidays):
            lines.append(f"  route:    {switches}")
        # repos, tags, exclude_tags and query: as the digest reads them (bare words that
        # name a tag rule's tag read as tags; the store's tags are read when the bot starts)
        read = channel_query(channel.query or "", config.rule_tags())
        query = channel.digest_filter(read).query_ast
        if query is not None:
            lines.append(f"  query:   {unparse(query)}")
        lines.append(f"  layout:  {channel.layout.value}, verbosity {channel.verbosity.value}")
    return lines


def _upcoming(schedule: str, tz: str, now: datetime, calendar: WorkingCalendar) -> str:
    """`next 2026-10-08T09:00:00+08:00 (after the holidays ...)`: the next fire on working
    time (holidays, days off and quiet hours skipped)."""
    if schedule == NOW_SCHEDULE:
        if calendar.always:
            return "posts each matching PR as it arrives"
        if calendar.next_working(now) is None:  # every day a holiday or off: held for good
            return "warning: never posts: no working time within a year (see its calendar)"
        return "posts each matching PR as it arrives, held outside working time"
    try:
        found = next_real_fire(schedule, tz, now, calendar)
    except CronError:
        return "never fires (see the errors below)"
    if found is None:
        return "warning: never fires on working time within a year (see its calendar)"
    return " ".join(part for part in ("next", found.at.isoformat(), found.note) if part)


async def _check(args: argparse.Namespace) -> int:
    env, config = load()
    for line in describe(env, config):
        print(line)
    found = problems(env, config)
    if found:
        raise CliError("\n  " + "\n  ".join(found))
    print("ok")
    return 0


async def _schema(args: argparse.Namespace) -> int:
    print(json.dumps(Report.model_json_schema(), ensure_ascii=False, indent=2))
    return 0


async def _migrate(args: argparse.Namespace) -> int:
    async with open_context() as ctx:
        revision = await current_revision(ctx.engine)
        indexed = await rebuild_index(ctx.engine)
    print(f"database at revision {revision}")
    print(f"search index rebuilt: {indexed} report{'' if indexed == 1 else 's'} indexed")
    return 0


CHECK_CONFIG = Command(
    "check-config", "validate config and environment; print what would run", _no_args, _check
)
SCHEMA = Command("schema", "print the Report JSON Schema", _no_args, _schema)
MIGRATE = Command("migrate", "apply database migrations (also done on start)", _no_args, _migrate)
