"""The steps of planning a batch of runs: what it reads, what it works out from that.

Planning a batch (`bot/core/delivery/outbox.py`) takes each run's parts (`take_parts`), reads
what the digests depend on besides the reports (`read_facts`: reading marks, `now` posts, PRs
shown before, topics layouts), picks each part's new reports (`pick`), builds each run's digest
(`build`), gives each run its edition (`bot/core/delivery/editions.py`) and writes the runs.
The reads come in one step, for the whole batch, so the steps after it only work things out.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter

from sqlalchemy.ext.asyncio import AsyncConnection

from bot.core.delivery.audiences import alone, merged, posted_before
from bot.core.delivery.queue import layout_for
from bot.core.delivery.reading import Shown, shown_before, with_unread
from bot.core.delivery.runs import Run
from bot.core.delivery.tick_plan import TickPlan
from bot.core.digest.select import StoredReport
from bot.core.models import Layout
from bot.core.store.reading import Marks, marks_in

Window = tuple[list[StoredReport], int]  # the reports after a start, and the newest seq of them


@dataclass(frozen=True, slots=True)
class Facts:
    """What a batch's digests depend on besides its runs' parts, read for its runs at once."""

    marks: Mapping[int, Marks]  # by destination, where any are in force
    windows: Mapping[int, Window]  # by start
    posted: Mapping[int, dict[int, str]]  # by destination: the PRs `now` posted, and when
    days: Mapping[int, int]  # by destination with a scheduled part: its unread_days
    shown: Mapping[int, Shown]  # by destination in `days`: what may come back as unread
    layouts: Mapping[int, Layout]  # by destination: a topics run's layout, as planned now


def failed_before(runs: Sequence[Run]) -> list[int]:
    """The destinations whose digest failed to plan before (their streak ends if this works)."""
    return [run.destination_id for run in runs if run.due[0].subscription.plan_error]


async def read_facts(conn: AsyncConnection, runs: Sequence[Run], tick: TickPlan) -> Facts:
    """The facts of the runs (which have their parts), in a few statements for all of them;
    sets each run's window of seqs (its lowest start, the newest seq after it)."""
    marks = await marks_in(conn, [run.destination_id for run in runs], tick.now)
    windows: dict[int, Window] = {}
    starts = sorted(
        ((min(part.start for part in run.parts), run) for run in runs), key=itemgetter(0)
    )
    for start, run in starts:  # each window read once, a cap logged for its first run
        if start not in windows:
            window = await tick.window(conn, run.label, start)
            windows[start] = (window, max((item.seq for item in window), default=start))
        run.seqs = (start, windows[start][1])
    posted = await posted_before(conn, runs)
    days = {
        run.destination_id: tick.reading.days_at(run.lead.platform.value, run.lead.target)
        for run in runs
        if any(not part.sub.instant for part in run.parts)  # a `now` post carries no unread
    }
    shown = await shown_before(conn, days, tick.now)
    layouts = {  # (any part's: `pick` may leave a run without its first part)
        run.destination_id: await layout_for(conn, run.destination_id, Layout.TOPICS, tick.now)
        for run in runs
        if any(part.sub.layout is Layout.TOPICS for part in run.parts)
    }
    return Facts(marks, windows, posted, days, shown, layouts)


def _by_start(runs: Sequence[Run]) -> list[Run]:
    """The runs by their lowest start (`read_facts` set it): the runs of one window follow
    each other, so the tick's picks of a window are worked out once (a new window starts
    them over)."""
    return sorted(runs, key=lambda run: run.seqs[0])


async def pick(runs: Sequence[Run], tick: TickPlan, facts: Facts) -> list[tuple[int, int]]:
    """Each part's new reports (snoozed PRs and muted tags leave); a `now` subscription with
    nothing new leaves its run, and what it read is behind it: the (subscription, seq) its
    watermark moves to."""
    moves = []
    for run in _by_start(runs):
        window, end = facts.windows[run.seqs[0]]
        quiet = facts.marks.get(run.destination_id)
        run.marked = quiet is not None
        for part in run.parts:
            picked = tick.pick(window, part)
            part.picked = [i for i in picked if not quiet.quiet(i)] if quiet else list(picked)
        run.window = tick.generation
        kept = []
        for part in run.parts:
            if part.sub.instant and not part.picked:
                if part.start == part.sub.watermark:  # nothing of it is still being delivered
                    moves.append((part.sub.id, end))
                continue
            kept.append(part)
        run.parts = kept
        await tick.book.breather.breathe()  # (the run's picks and window are set: safe)
    return moves


async def build(runs: Sequence[Run], tick: TickPlan, facts: Facts) -> list[tuple[Run, Hashable]]:
    """Each run's merged digest (its audience's, built once) with its own unread carry-over;
    the runs worth posting, with their audiences."""
    posting = []
    for run in runs:
        before = facts.posted.get(run.destination_id, {})
        audience, make = merged(run, before) if before or run.marked else alone(run)
        digest = tick.book.digest(audience, make)
        days = facts.days.get(run.destination_id)
        if days is not None:
            here = facts.marks.get(run.destination_id, Marks())
            digest = with_unread(digest, facts.shown[run.destination_id], here, days, tick.now)
        run.digest = digest
        if digest.worth_sending or any(part.sub.post_empty for part in run.parts):
            posting.append((run, audience))
        await tick.book.breather.breathe()
    return posting
