"""What a restart says on a destination with nothing to catch up on, so that it is not silence."""

from __future__ import annotations

from datetime import datetime

from bot.core.calendar import WorkingCalendar
from bot.core.clock import human_time
from bot.core.delivery.outbox import covered_seq
from bot.core.digest.select import select_new
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import Subscription
from bot.scheduling.due import due_time, next_digest


async def quiet_note(
    reports: ReportStore,
    dest: Subscription,
    now: datetime,
    last: datetime | None,
    calendar: WorkingCalendar | None = None,
) -> str | None:
    """What a restart says on a destination with no digest to catch up on, so that it is not
    silence: "nothing new since <last digest>; next digest <time>" (its next fire on working
    time). None when a digest is due now (the first tick sends it), the schedule never fires,
    or never on working time."""
    if due_time(dest, now, last, calendar) is not None:
        return None
    found = next_digest(dest, now, calendar)
    if found is None:
        return None
    upcoming = found.at
    async with reports.engine.connect() as conn:
        covered = await covered_seq(conn, dest.id)
    new = len(select_new(await reports.since(covered), dest.filter, covered, now))
    waiting = f"{new} new report(s) waiting" if new else "nothing new"
    since = f" since {human_time(last)}" if last is not None else "; no digest sent yet"
    return f"{waiting}{since}; next digest {human_time(upcoming)}"
