"""`prdigest run`: the service (web server, scheduler, delivery, platform adapters)."""

from __future__ import annotations

import argparse
import os

from bot.cli.common import CliError, Command
from bot.cli.config_cmd import problems
from bot.core.store.sql.db import url_password
from bot.logs import setup_logging
from bot.service.app import Service
from bot.service.context import load, open_context
from bot.service.server import ListenError, listen_socket, serve


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--log-level", default=os.environ.get("BOT_LOG_LEVEL", "INFO"))
    parser.add_argument(
        "--log-format",
        choices=["json", "text"],
        default=os.environ.get("BOT_LOG_FORMAT") or None,
        help="default: text on a terminal, JSON lines otherwise (env BOT_LOG_FORMAT)",
    )


async def _handle(args: argparse.Namespace) -> int:
    env, config = load()
    secrets = [
        s.get_secret_value()
        for s in (
            env.slack_bot_token,
            env.slack_signing_secret,
            env.slack_app_token,
            env.telegram_bot_token,
            env.telegram_webhook_secret,
            env.ingest_token,
        )
        if s is not None
    ]
    if password := url_password(env.database_url):
        secrets.append(password)  # a driver's message could carry it
    setup_logging(args.log_level.upper(), secrets, args.log_format)
    found = problems(env, config)
    if found:
        raise CliError("\n  " + "\n  ".join(found))
    try:  # before the database, the scheduler and the adapters: nothing starts for nothing
        sock = listen_socket(env.http_host, env.http_port)
    except ListenError as exc:
        raise CliError(str(exc)) from None
    with sock:
        async with open_context(env) as ctx:
            await serve(Service(ctx), sock)
    return 0


COMMAND = Command("run", "run the service: web, scheduler, delivery, adapters", _configure, _handle)
