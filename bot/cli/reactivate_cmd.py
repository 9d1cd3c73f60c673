"""`prdigest reactivate DESTINATION`: turn a deactivated destination back on after fixing it
(the bot invited back into the channel, the chat unblocked)."""

from __future__ import annotations

import argparse

from bot.cli.common import CliError, Command
from bot.core.store.subscriptions import SubscriptionStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from bot.service.context import open_context


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "destination", metavar="DESTINATION", help="a channel name, or platform:target"
    )


async def _handle(args: argparse.Namespace) -> int:
    async with open_context(create=False) as ctx:
        store = DestinationStore(ctx.engine)
        subs = await SubscriptionStore(ctx.engine).sync_config(ctx.config)
        named = {s.name: s.destination_id for s in subs}
        found = [
            d
            for d in await store.all()
            if args.destination == d.label or named.get(args.destination) == d.id
        ]
        if not found:
            known = ", ".join([*named, *(d.label for d in await store.all())]) or "none"
            raise CliError(f"no destination {args.destination!r} (known: {known})")
        dest = found[0]
        if dest.active:
            print(f"{dest.label} is already active")
            return 0
        await store.set_active(dest.id, True)
    print(f"{dest.label} reactivated (was: {dest.deactivated_reason})")
    return 0


COMMAND = Command("reactivate", "turn a deactivated destination back on", _configure, _handle)
