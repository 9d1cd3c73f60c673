"""A helper process for the replica tests: fire the same digest runs at agreed instants.

    python tests/kits/fire_runs.py DATABASE_URL START_EPOCH COUNT

Every instance syncs the same console channel and, at START + i·STEP, plans the run for
scheduled time i. Prints how many runs this instance created.
"""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import UTC, datetime, timedelta

from bot.core.delivery.outbox import plan_digest
from bot.core.render.renderer import Renderer
from bot.core.store.sql.db import create_engine
from bot.core.store.subscriptions import SubscriptionStore
from bot.settings import BotConfig

STEP = 0.25
CONFIG = BotConfig.model_validate(
    {"channels": [{"name": "race", "platform": "console", "target": "race", "post_empty": True}]}
)


async def main(url: str, start: float, count: int) -> int:
    engine = create_engine(url)
    [dest] = await SubscriptionStore(engine).sync_config(CONFIG)
    renderer = Renderer()
    base = datetime(2026, 9, 1, 9, tzinfo=UTC)
    created = 0
    for i in range(count):
        await asyncio.sleep(max(0.0, start + i * STEP - time.time()))
        now = datetime.now(UTC)
        run = await plan_digest(engine, dest, base + timedelta(days=i), renderer, now)
        created += run.created
    await engine.dispose()
    return created


if __name__ == "__main__":
    print(asyncio.run(main(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]))))
