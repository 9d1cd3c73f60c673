"""`prdigest status`: per destination, the last digest, what is queued or failed, and why."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from bot.cli.common import Command
from bot.context import open_context
from bot.core.store.destinations import DestinationStore
from bot.core.store.status import DestinationStatus, collect


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=["text", "json"], default="text", dest="fmt")


def _text(item: DestinationStatus) -> str:
    state = (
        "active"
        if item.active
        else f"DEACTIVATED ({item.deactivated_reason}); after fixing it: "
        f"prdigest reactivate {item.destination}"
    )
    last = f"{item.last_digest} {item.last_digest_status}" if item.last_digest else "never"
    line = (
        f"{item.destination:24} {item.platform}:{item.target}  {state}\n"
        f"    last digest: {last}; pending {item.pending}, failed {item.failed}"
    )
    if item.last_error and (item.pending or item.failed):
        line += f"\n    last error: {item.last_error}"
    return line


async def _handle(args: argparse.Namespace) -> int:
    async with open_context() as ctx:
        await DestinationStore(ctx.engine).sync_config(ctx.config)
        items = await collect(ctx.engine)
    if args.fmt == "json":
        print(json.dumps([asdict(i) for i in items], ensure_ascii=False, indent=2))
    elif not items:
        print("no destinations: add channels to the config or subscribe a chat")
    else:
        print("\n".join(_text(i) for i in items))
    return 0


COMMAND = Command(
    "status", "per destination: last digest, queued and failed messages", _configure, _handle
)
