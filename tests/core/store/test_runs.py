"""A tick reads every due subscription's last fire time at once, and it says what the one-by-one
read says: the latest fire among its runs, and nothing before its first run."""

from __future__ import annotations

from datetime import timedelta

from bot.core.delivery.outbox import plan_digest
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.runs import last_scheduled_time, last_scheduled_times
from tests.kits.delivery import FakeClock, add_reports, channel, setup_destinations


async def test_the_last_fire_times_read_at_once_match_the_one_by_one_read(
    store: ReportStore,
) -> None:
    clock = FakeClock()
    subs = await setup_destinations(
        store.engine, channel("a", "A"), channel("b", "B"), channel("never", "N")
    )
    await add_reports(store, range(1, 3))
    for hours in (0, 24, 48):
        for sub in subs[:2]:
            await plan_digest(
                store.engine, sub, clock() + timedelta(hours=hours), Renderer(), clock()
            )
    together = await last_scheduled_times(store.engine, [sub.id for sub in subs])
    for sub in subs:
        assert together.get(sub.id) == await last_scheduled_time(store.engine, sub.id)
    assert together[subs[0].id] == clock() + timedelta(hours=48)
    assert subs[2].id not in together
