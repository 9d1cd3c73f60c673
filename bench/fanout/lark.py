"""Fan-out to Feishu: 2,000 group chats (`oc_…`) get the digest of 500 new reports as cards.

The bot's own delivery layer (`Deliverer` + `LarkSender` over `LarkClient`, outbox on SQLite)
sends every card to the strict fake Open API (`tests/fakes/lark/api.FakeLark`, on loopback in
this process), which keeps Feishu's limits (50/s and 1,000/min per app: HTTP 429, code
99991400; 5 QPS per chat: code 230020), checks every card and drops a repeated `uuid`.

Time is scaled as in the Telegram fan-out: the fake reads a clock running 1 / TIME_SCALE as
fast as the wall's, and the sender's pace and per-chat interval are multiplied by TIME_SCALE,
so the run is short and both sides still agree on Feishu's seconds. Rates are counted in the
fake's (Feishu's) seconds. Allowed is our own pace, LARK_MAX_PER_SECOND (15/s: 90% of the
documented 1,000 a minute, render/limits/lark.py); the share of the documented limit is shown
beside it.

    python -m bench.fanout.lark [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.fanout.setup import NEW_REPORTS, plan_all, queued, subscribe  # noqa: E402
from bench.render import make_reports  # noqa: E402
from bot.adapters.lark.client import LarkClient  # noqa: E402
from bot.adapters.lark.sender import LarkSender  # noqa: E402
from bot.core.delivery.deliverer import Deliverer  # noqa: E402
from bot.core.delivery.ledger import unfinished_count  # noqa: E402
from bot.core.models import Platform  # noqa: E402
from bot.core.render.limits.lark import (  # noqa: E402
    LARK_APP_PER_MINUTE,
    LARK_MAX_PER_SECOND,
    LARK_PER_CHAT_INTERVAL,
)
from bot.core.render.renderer import Renderer  # noqa: E402
from bot.core.store.reports import ReportStore  # noqa: E402
from bot.core.store.sql.db import create_engine, migrate  # noqa: E402
from tests.fakes.lark.api import FakeLark  # noqa: E402

TIME_SCALE = 0.5  # Feishu's seconds last half a wall second: 30 cards/s on the wall
FULL_CHATS = 2_000
QUICK_CHATS = 300
AIM_RATE_RATIO = 0.95
# Feishu's answers to a send past its limits: the app's rate (HTTP 429) and one chat's QPS.
LIMIT_CODES = {99991400: "app rate (429)", 230020: "chat QPS"}

# One queued card: the group chat and the card as the sender posts it.
Card = tuple[str, dict[str, Any]]


class ScaledLarkSender(LarkSender):
    """The production sender with its pace and per-chat interval in scaled time."""

    def __init__(self, client: LarkClient, scale: float) -> None:
        super().__init__(client)
        self.scale = scale
        self.max_per_second = LARK_MAX_PER_SECOND / scale

    def interval_for(self, target: str) -> float:
        return LARK_PER_CHAT_INTERVAL * self.scale


def group_chats(count: int) -> list[str]:
    return [f"oc_bench{number:08d}" for number in range(count)]


async def queued_cards(engine: Any) -> list[Card]:
    return [(target, dict(payload["card"])) for target, payload in await queued(engine)]


async def prepare(folder: Path, chats: int, seed: int = 7422) -> tuple[Any, list[Card], float]:
    """A SQLite store with a subscription per group chat and 500 new reports, every digest
    queued as one scheduler tick plans it; the engine, the cards and the planning seconds."""
    rng = random.Random(seed)
    engine = create_engine(f"sqlite:///{folder / 'fanout-lark.db'}")
    await migrate(engine)
    await subscribe(engine, group_chats(chats), rng, Platform.LARK)
    items = make_reports(NEW_REPORTS, rng)
    await ReportStore(engine).upsert_many([(item.report, "bench") for item in items])
    scheduled_for = datetime.now(UTC).replace(microsecond=0)
    plan_seconds = await plan_all(engine, Renderer(), scheduled_for)
    return engine, await queued_cards(engine), plan_seconds


async def deliver(engine: Any, sender: LarkSender) -> float:
    """Run a Deliverer until the outbox is empty; wall seconds."""
    gc.freeze()  # like `prdigest run` after start: what setup built is not garbage
    started = time.perf_counter()
    deliverer = Deliverer(engine, {Platform.LARK: sender}, "bench-fanout-lark")
    task = asyncio.create_task(deliverer.run_forever())
    try:
        while True:  # as bench/fanout/telegram.py's drain: poll the outbox until it is empty
            if not await unfinished_count(engine):
                break
            await asyncio.sleep(0.25)
    finally:
        deliverer.stop()
        await task
        await sender.close()
    return time.perf_counter() - started


def _canonical(card: dict[str, Any]) -> str:
    return json.dumps(card, sort_keys=True, ensure_ascii=False)


def figures(fake: FakeLark, expected: Sequence[Card], wall: float) -> dict[str, Any]:
    """Rate over the span of accepted sends (Feishu's seconds), limit errors, lost and
    duplicated (chat, card) pairs."""
    posted = [p for p in fake.posted if p.by_bot]
    want = Counter((chat, _canonical(card)) for chat, card in expected)
    got = Counter((p.chat_id, _canonical(p.card)) for p in posted)
    times = sorted(p.time for p in posted)
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    achieved = (len(times) - 1) / span if span > 0 else 0.0
    limited = Counter(LIMIT_CODES[c.code] for c in fake.calls if c.code in LIMIT_CODES)
    documented = LARK_APP_PER_MINUTE / 60
    return {
        "messages": len(expected),
        "sent": len(posted),
        "seconds": round(wall, 2),
        "achieved_per_s": round(achieved, 2),
        "allowed_per_s": LARK_MAX_PER_SECOND,
        "rate_ratio": round(achieved / LARK_MAX_PER_SECOND, 3),
        "documented_per_s": round(documented, 2),
        "documented_ratio": round(achieved / documented, 3),
        "violations": sum(limited.values()),
        "violations_by_rule": dict(limited),
        "lost": sum((want - got).values()),
        "duplicates": sum((got - want).values()),
        "without_uuid": sum(1 for p in posted if not p.uuid),
    }


async def run_async(quick: bool, scale: float = TIME_SCALE) -> dict[str, Any]:
    chats = QUICK_CHATS if quick else FULL_CHATS
    with tempfile.TemporaryDirectory() as tmp:
        engine, cards, plan_seconds = await prepare(Path(tmp), chats)
        try:
            async with FakeLark(clock=lambda: time.monotonic() / scale) as fake:
                for chat in group_chats(chats):
                    fake.add_chat(chat)
                client = LarkClient(fake.app_id, fake.app_secret, fake.url)
                wall = await deliver(engine, ScaledLarkSender(client, scale))
            found = figures(fake, cards, wall)
        finally:
            await engine.dispose()
    return {
        "chats": chats,
        "reports": NEW_REPORTS,
        "time_scale": scale,
        "plan_seconds": round(plan_seconds, 1),
        **found,
        "aim": AIM_RATE_RATIO,
    }


def summary(found: dict[str, Any]) -> list[tuple[str, str, str, bool | None]]:
    """The headline rows of docs/benchmarks.md: measured, aim, met."""
    clean = found["lost"] == 0 and found["duplicates"] == 0
    ratio = found["rate_ratio"]
    return [
        ("Feishu fan-out rate ÷ our pace", f"{ratio:.3f}", f"≥ {AIM_RATE_RATIO}", ratio >= 0.95),
        ("Feishu limit errors", str(found["violations"]), "0", found["violations"] == 0),
        ("Feishu lost / duplicated", f"{found['lost']} / {found['duplicates']}", "0 / 0", clean),
    ]


def row(found: dict[str, Any]) -> str:
    """The Feishu line of the fan-out table (the Telegram table's columns)."""
    return (
        f"| prdigest outbox + `LarkSender`, {found['chats']:,} Feishu groups "
        f"| {found['messages']:,} | {found['seconds']:.0f} | {found['achieved_per_s']:.1f} "
        f"| {found['rate_ratio']:.3f} | {found['violations']:,} | {found['lost']:,} "
        f"| {found['duplicates']:,} |"
    )


def paragraph(found: dict[str, Any]) -> str:
    """What the Feishu line measures, for the fan-out section."""
    return (
        f"**Feishu: {found['chats']:,} group chats, achieved ÷ our pace "
        f"{found['rate_ratio']:.3f}** (aim ≥ {AIM_RATE_RATIO}), **{found['violations']} limit "
        f"errors, {found['lost']} lost, {found['duplicates']} duplicated**. The real "
        "`LarkSender` and `LarkClient` send each card to the strict fake Open API, which "
        "keeps Feishu's limits (50/s and 1,000/min per app, answered with HTTP 429 code "
        "99991400; 5 QPS per chat, code 230020, both counted as limit errors), checks every "
        "card and drops a repeated `uuid`. Allowed is our own pace, "
        f"{LARK_MAX_PER_SECOND:g} cards/s (90% of the documented 1,000 a minute, which is "
        f"{found['documented_per_s']:.1f}/s: the sender reaches "
        f"{found['documented_ratio']:.3f} of that). The rate is in Feishu's seconds: time "
        f"is scaled by {found['time_scale']} as above (the fake's clock runs "
        f"{1 / found['time_scale']:g}× as fast, the sender's pace and per-chat interval "
        f"are multiplied by {found['time_scale']}), so the sent/s column is Feishu's. "
        f"Digests planned before the clock starts ({found['plan_seconds']:.1f} s); "
        "SQLite store."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_CHATS:,} chats instead of {FULL_CHATS:,}"
    )
    parser.add_argument("--scale", type=float, default=TIME_SCALE)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run_async(args.quick, args.scale)), indent=2))


if __name__ == "__main__":
    main()
