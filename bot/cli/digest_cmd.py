"""`prdigest digest CHANNEL [--dry-run] [--format ...]`: one digest, now."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import datetime

from bot.chat.reading import reading_policy
from bot.cli.common import CliError, Command, print_json_lines
from bot.core import clock
from bot.core.clock import human_time
from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.ledger import unfinished_count
from bot.core.delivery.outbox import Due, plan_digest, rehearse_run
from bot.core.models import Format, Origin
from bot.core.render.renderer import Renderer
from bot.core.store.runs import last_scheduled_time
from bot.core.store.sql.db import rehearsal_transaction
from bot.core.store.subscriptions import Subscription, SubscriptionStore
from bot.scheduling.due import longer_than_a_day
from bot.service.app import build_senders, worker_id
from bot.service.context import Context, load, open_context
from bot.settings import Channel

DELIVERY_DEADLINE_SECONDS = 120.0
IDLE_SECONDS = 0.2


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("channel", metavar="CHANNEL", help="a channel name from the config")
    parser.add_argument("--dry-run", action="store_true", help="print the payloads, change nothing")
    parser.add_argument(
        "--format",
        choices=[f.value for f in Format],
        dest="fmt",
        help="payload format; default: text for --dry-run, the channel's platform otherwise",
    )
    parser.add_argument(
        "--wait",
        type=float,
        default=DELIVERY_DEADLINE_SECONDS,
        help="seconds to keep delivering (rate limits) before leaving the rest queued",
    )


def nothing_new(name: str, last: datetime | None) -> str:
    if last is None:
        return f"nothing for {name} yet: no stored report matches it and no digest was sent"
    return f"nothing new for {name} since the last digest at {human_time(last)}"


async def _dry_run(ctx: Context, channel: Channel, fmt: Format) -> int:
    """The digest `prdigest digest CHANNEL` would deliver now, planned by the same code in a
    transaction that is rolled back: the payloads are the ones delivery would send."""
    store = SubscriptionStore(ctx.engine)
    now = clock.utc_clock()
    async with rehearsal_transaction(ctx.engine) as conn:
        await store.sync_config_in(conn, ctx.config)
        found = await SubscriptionStore.named_in(conn, channel.name)
        [dest] = [s for s in found if s.origin is Origin.CONFIG]
        due = [Due(dest, now, longer_than_a_day(dest, now))]
        reading = reading_policy(ctx.config)
        payloads = await rehearse_run(
            conn, dest.destination_id, due, Renderer(), now, reading=reading, fmt=fmt
        )
    if not dest.active:
        print(f"{dest.label} is deactivated: {dest.deactivated_reason}", file=sys.stderr)
    if not payloads:
        last = await last_scheduled_time(ctx.engine, dest.id)
        print(nothing_new(channel.name, last), file=sys.stderr)
        return 0
    if fmt is Format.TEXT:
        print("\n\n".join(str(payload.get("text", "")) for payload in payloads))
    else:
        print_json_lines(payloads)
    return 0


async def _drain(deliverer: Deliverer, ctx: Context, dest: Subscription, deadline: float) -> int:
    """Deliver its destination's queued messages (older interrupted runs first); what is left."""
    stop_at = time.monotonic() + deadline
    place = dest.destination_id
    while (left := await unfinished_count(ctx.engine, destination_id=place)) and (
        time.monotonic() < stop_at
    ):
        if await deliverer.run_once(only_destination=place) == 0:
            await asyncio.sleep(IDLE_SECONDS)
    return left


async def _deliver(ctx: Context, dest: Subscription, deadline: float) -> int:
    senders = build_senders(ctx)
    if dest.platform not in senders:
        raise CliError(f"{dest.label} posts to {dest.platform.value}, which has no token set")
    deliverer = Deliverer(ctx.engine, {dest.platform: senders[dest.platform]}, worker_id())
    resumed = await _drain(deliverer, ctx, dest, deadline)
    if resumed:
        print(f"{resumed} message(s) of an earlier digest still queued", file=sys.stderr)
        return 1
    last = await last_scheduled_time(ctx.engine, dest.id)
    now = clock.utc_clock()  # a manual run is its own scheduled time
    weekly = longer_than_a_day(dest, now)
    reading = reading_policy(ctx.config)
    run = await plan_digest(
        ctx.engine, dest, now, Renderer(), now, reading=reading, synthesis=weekly
    )
    if not run.created and not dest.instant:
        raise CliError(f"a digest for {dest.label} was run at the same instant")
    if run.messages == 0:  # a `now` subscription plans nothing when nothing new matches
        print(f"{nothing_new(dest.label, last)}; nothing sent")
        return 0
    left = await _drain(deliverer, ctx, dest, deadline)
    print(
        f"{dest.label}: {run.messages - left}/{run.messages} messages delivered, "
        f"{run.entries} entries"
    )
    if left:
        print(
            f"{left} message(s) still queued (rate limit or outage); `prdigest run` or the next "
            "`prdigest digest` delivers them; `prdigest status` shows why",
            file=sys.stderr,
        )
        return 1
    return 0


async def _handle(args: argparse.Namespace) -> int:
    env, config = load()
    channel = config.channel(args.channel)  # an unknown name is told before the database
    async with open_context(env, create=False) as ctx:
        if args.dry_run:  # a preview is for reading: text unless asked otherwise
            return await _dry_run(ctx, channel, Format(args.fmt or Format.TEXT.value))
        store = SubscriptionStore(ctx.engine)
        await store.sync_config(ctx.config)
        [dest] = [s for s in await store.named(channel.name) if s.origin is Origin.CONFIG]
        if not dest.active:
            raise CliError(f"{dest.label} is deactivated: {dest.deactivated_reason}")
        return await _deliver(ctx, dest, args.wait)


COMMAND = Command(
    "digest", "render a channel's next digest (--dry-run) or deliver it now", _configure, _handle
)
