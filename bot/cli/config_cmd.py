"""`prdigest check-config`, `prdigest schema`, `prdigest migrate`."""

from __future__ import annotations

import argparse
import json

from bot.cli.common import CliError, Command
from bot.context import load, open_context
from bot.core.clock import utc_clock
from bot.core.models import Platform
from bot.core.reports.model import Report
from bot.core.store.db import DatabaseURLError, async_url, current_revision, masked_url
from bot.cron import CronError, next_fire
from bot.settings import BotConfig, Env


def _no_args(parser: argparse.ArgumentParser) -> None:
    del parser


def problems(env: Env, config: BotConfig) -> list[str]:
    """What would stop `prdigest run` from working as configured."""
    found: list[str] = []
    try:
        async_url(env.database_url)
    except DatabaseURLError as exc:
        found.append(str(exc))
    for channel in config.channels:
        tz = config.channel_timezone(channel)
        try:
            next_fire(channel.schedule, tz, utc_clock())
        except CronError as exc:
            found.append(f"channels.{channel.name}.schedule: {exc}")
        if channel.platform is Platform.SLACK and not env.slack_enabled:
            found.append(f"channel {channel.name!r} posts to Slack but SLACK_BOT_TOKEN is not set")
        if channel.platform is Platform.TELEGRAM and not env.telegram_enabled:
            found.append(
                f"channel {channel.name!r} posts to Telegram but TELEGRAM_BOT_TOKEN is not set"
            )
    if env.slack_enabled and not env.slack_app_token and not env.slack_signing_secret:
        found.append("SLACK_BOT_TOKEN is set but neither SLACK_SIGNING_SECRET nor SLACK_APP_TOKEN")
    if config.telegram.webhook_url and not env.telegram_webhook_secret:
        found.append("telegram.webhook_url is set but TELEGRAM_WEBHOOK_SECRET is not")
    return found


def describe(env: Env, config: BotConfig) -> list[str]:
    now = utc_clock()
    lines = [
        f"config:    {env.config_path or 'built-in defaults (no config/bot.yaml)'}",
        f"database:  {masked_url(env.database_url)}",
        f"http:      {env.http_host}:{env.http_port}",
        f"slack:     {'on' if env.slack_enabled else 'off (no SLACK_BOT_TOKEN)'}"
        + (" (Socket Mode)" if env.slack_app_token else ""),
        f"telegram:  {'on' if env.telegram_enabled else 'off (no TELEGRAM_BOT_TOKEN)'}"
        + (" (webhook)" if config.telegram.webhook_url else " (long polling)"),
        f"ingest API: {'on' if env.ingest_token else 'off (no BOT_INGEST_TOKEN)'}",
    ]
    for source in config.sources:
        lines.append(f"source:    {source.dir or source.url} every {source.interval_seconds}s")
    for channel in config.channels:
        tz = config.channel_timezone(channel)
        try:
            upcoming = next_fire(channel.schedule, tz, now)
        except CronError:
            upcoming = None
        lines.append(
            f"channel:   {channel.name} → {channel.platform.value}:{channel.target} "
            f"'{channel.schedule}' {tz}, next {upcoming.isoformat() if upcoming else '?'}"
        )
    return lines


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
    print(f"database at revision {revision}")
    return 0


CHECK_CONFIG = Command(
    "check-config", "validate config and environment; print what would run", _no_args, _check
)
SCHEMA = Command("schema", "print the Report JSON Schema", _no_args, _schema)
MIGRATE = Command("migrate", "apply database migrations (also done on start)", _no_args, _migrate)
