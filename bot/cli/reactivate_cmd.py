"""`prdigest reactivate DESTINATION`: turn a deactivated destination back on after fixing it
(the bot invited back into the channel, the chat unblocked)."""

from __future__ import annotations

import argparse

from bot.cli.common import CliError, Command
from bot.context import open_context
from bot.core.store.destinations import DestinationStore


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "destination", metavar="DESTINATION", help="a channel name, or platform:target"
    )


async def _handle(args: argparse.Namespace) -> int:
    async with open_context(create=False) as ctx:
        store = DestinationStore(ctx.engine)
        await store.sync_config(ctx.config)
        found = [
            d
            for d in await store.all()
            if args.destination in (d.name, d.label, f"{d.platform.value}:{d.target}")
        ]
        if not found:
            known = ", ".join(d.label for d in await store.all()) or "none"
            raise CliError(f"no destination {args.destination!r} (known: {known})")
        dest = found[0]
        if dest.active:
            print(f"{dest.label} is already active")
            return 0
        await store.set_active(dest.id, True)
    print(f"{dest.label} reactivated (was: {dest.deactivated_reason})")
    return 0


COMMAND = Command("reactivate", "turn a deactivated destination back on", _configure, _handle)
