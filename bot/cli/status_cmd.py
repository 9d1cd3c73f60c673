"""`prdigest status`: the database in use, whether Slack and Telegram can be reached, then per
destination (config channels and chat subscriptions): its tags and schedule, the last digest,
what is queued or failed, and why."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from bot.cli.common import Command
from bot.cli.probe import platform_lines
from bot.core.clock import human_time
from bot.core.digest.filter_query import EVERYTHING, listed_query
from bot.core.models import Origin
from bot.core.store.status import DestinationStatus, collect
from bot.core.store.subscriptions import SubscriptionStore
from bot.service.context import database_line, load, open_context

CHANGES_SHOWN = 10  # the newest subscription changes made from chats


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=["text", "json"], default="text", dest="fmt")
    parser.add_argument(
        "--no-probe",
        action="store_false",
        dest="probe",
        help="do not ask Slack and Telegram whether they can be reached",
    )


def _state(item: DestinationStatus) -> str:
    if item.active:
        return "active"
    return (
        f"DEACTIVATED ({item.deactivated_reason}); after fixing it: "
        f"prdigest reactivate {item.destination}"
    )


def _what(item: DestinationStatus) -> str:
    """`config channel, query '(tag:rollout OR tag:fix) -tag:ci'; schedule '0 9 * * mon-fri'
    Asia/Shanghai`, `chat subscription 2 (personal: U123), query 'tag:breaking'; schedule 'now'
    UTC`: the one query its digest evaluates (filter_query.listed_query)."""
    kind = f"chat subscription {item.number}" if item.origin is Origin.CHAT else "config channel"
    if item.owner:
        kind += f" (personal: {item.owner})"
    what = listed_query(item.repos, item.tags, item.exclude_tags, item.query)
    shown = "all reports" if what == EVERYTHING else f"query {what!r}"
    return f"{kind}, {shown}; schedule '{item.cadence}' {item.timezone}"


def _text(item: DestinationStatus) -> str:
    last = f"{item.last_digest} {item.last_digest_status}" if item.last_digest else "never"
    line = (
        f"{item.destination:24} {item.platform}:{item.target}  {_state(item)}\n"
        f"    {_what(item)}\n"
        f"    last digest: {last}; pending {item.pending}, failed {item.failed}"
    )
    if item.last_error and (item.pending or item.failed):
        line += f"\n    last error: {item.last_error}"
    if item.plan_error:
        line += (
            f"\n    DIGEST FAILING: {item.plan_error}; tried again at {item.plan_retry_at}"
            " (the log has the traceback)"
        )
    return line


async def _handle(args: argparse.Namespace) -> int:
    env, _ = load()
    # JSON readers get the list alone on stdout; the database and platforms go to stderr.
    out = sys.stderr if args.fmt == "json" else sys.stdout
    print(database_line(env), file=out)
    if args.probe:
        print("\n".join(await platform_lines(env)), file=out)
    async with open_context(env, create=False) as ctx:
        subscriptions = SubscriptionStore(ctx.engine)
        await subscriptions.sync_config(ctx.config)
        items = await collect(ctx.engine)
        changes = await subscriptions.changes(CHANGES_SHOWN)
    if args.fmt == "json":
        print(json.dumps([asdict(i) for i in items], ensure_ascii=False, indent=2))
    elif not items:
        print("no destinations: add channels to the config or subscribe a chat")
    else:
        print("\n".join(_text(i) for i in items))
    if changes and args.fmt != "json":
        print("\nlast changes from chats:")
        for change in changes:
            when = human_time(change.at)
            print(
                f"  {when}  {change.destination}  {change.actor}: {change.action} {change.detail}"
            )
    return 0


COMMAND = Command(
    "status",
    "the database and platforms; per destination: tags, schedule, last digest, queue",
    _configure,
    _handle,
)
