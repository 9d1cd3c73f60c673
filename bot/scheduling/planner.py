"""Where a tick plans: on the service's event loop, or in a planning process of its own.

Planning is CPU-bound (matching filters, rendering and serializing digests). On the event loop
it hands the loop over every few milliseconds (`Breather`), yet every `/pr`, button press and
Slack ack asked meanwhile still waits behind each slice, and a big tick holds a CPU for
seconds. So a tick that reads many destinations plans in a child process instead: it owns a
second engine on the same database and a `DigestTicker` of its own (its caches live there
between ticks), and the loop only awaits its answer. What it plans lands in the outbox, where
the loop's `Deliverer` finds it, exactly as when the loop planned it.

`delivery.planner`:
- `auto` (the default): the loop while the store holds fewer than PROCESS_FROM active
  destinations (counted at start, then by each tick; most teams never start a second
  process), the planning process from then on;
- `loop`: always the loop; `process`: always the planning process.

The process is started with `spawn` (a fork would copy the loop's threads and connections),
once, at the first tick that needs it; if it dies (killed, out of memory) that tick plans on
the loop and the next one starts a new process. It cannot be used with an in-memory SQLite
database (a second process would open another, empty one) or a clock other than the real one
(a test's clock cannot cross into it): the loop plans then, whatever the mode.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import traceback
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.chat.reading import reading_policy
from bot.core.clock import Clock, utc_clock
from bot.core.delivery.runs import PlannedRun
from bot.core.render.renderer import Renderer
from bot.core.store.errors import is_outage
from bot.core.store.sql.db import create_engine
from bot.core.store.subscriptions import SubscriptionStore
from bot.logs import TextFormatter, log, redact, setup_logging
from bot.scheduling.tick import DigestTicker
from bot.settings import BotConfig
from bot.settings.planner import PlannerMode

logger = logging.getLogger("prdigest.scheduler")

PROCESS_FROM = 1_000  # destinations a tick reads: from this many, `auto` plans in the process
STOP_SECONDS = 10.0  # a tick still planning at shutdown gets this long, then SIGTERM
# The planning process yields the CPU to the service's (its chat answers, its sends) when
# both want it: planning is background work, and a digest a few seconds later is unseen. On
# Linux it runs as SCHED_IDLE, the least weight the scheduler gives (below nice 19, never none:
# a busy service slows the tick down, it does not stop it); `/pr`'s p99 during a tick was 1.7
# to 1.8 times the idle one at nice 10, 1.1 to 1.5 times as SCHED_IDLE. Elsewhere: this nice.
NICENESS = 10


def _yield_cpu() -> None:
    """Give the planning process the lowest CPU priority the system offers (see NICENESS)."""
    idle = getattr(os, "SCHED_IDLE", None)
    if idle is not None:
        try:
            os.sched_setscheduler(0, idle, os.sched_param(0))
            return
        except OSError:  # (a sandbox that refuses it)
            pass
    os.nice(NICENESS)


def digest_ticker(
    engine: AsyncEngine,
    config: BotConfig,
    renderer: Renderer,
    clock: Clock = utc_clock,
    subscriptions: SubscriptionStore | None = None,
) -> DigestTicker:
    """The tick as the config wants it: its calendars and reading settings."""
    subscriptions = subscriptions or SubscriptionStore(engine, clock)
    return DigestTicker(
        engine, subscriptions, renderer, clock, config.calendars(), reading_policy(config)
    )


class PlanningOutage(ConnectionError):
    """The planning process could not reach the store (an OSError, so `is_outage` says so)."""


class PlanningFailed(RuntimeError):
    """An error in the planning process, with its traceback there."""


@dataclass(frozen=True, slots=True)
class ChildSetup:
    """What the planning process is started with (pickled into it)."""

    database_url: str
    config: BotConfig
    log_level: str = "INFO"
    log_format: str = "json"
    secrets: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TickSummary:
    """What a tick planned, counted. Only counts cross from the planning process: a list of
    100,000 runs took 18 ms to unpickle, holding the GIL the loop's answers wait for."""

    destinations: int = 0  # read by the tick
    created: int = 0  # runs planned now (not found planned by another replica)
    messages: int = 0  # of the runs planned now
    by_status: dict[str, int] = field(default_factory=dict)  # runs planned now, by status
    outage: str | None = None  # the error's type, when the store could not be reached


def summarize(runs: Sequence[PlannedRun], destinations: int) -> TickSummary:
    created = [run for run in runs if run.created]
    statuses = Counter(run.status.value for run in created if run.status is not None)
    return TickSummary(
        destinations, len(created), sum(run.messages for run in created), dict(statuses)
    )


# -- in the planning process ------------------------------------------------------------------
_CHILD: tuple[asyncio.AbstractEventLoop, DigestTicker] | None = None


def _child_start(setup: ChildSetup) -> None:
    global _CHILD
    _yield_cpu()  # (before any thread starts: threads inherit it)
    setup_logging(setup.log_level, setup.secrets, setup.log_format)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    engine = create_engine(setup.database_url)
    _CHILD = (loop, digest_ticker(engine, setup.config, Renderer()))


def _child_tick() -> TickSummary:
    assert _CHILD is not None, "the planning process was not started"
    loop, ticker = _CHILD
    try:
        runs = loop.run_until_complete(ticker.tick())
    except Exception as error:
        if is_outage(error):
            return TickSummary(ticker.destinations, outage=type(error).__name__)
        raise PlanningFailed(traceback.format_exc()) from None  # picklable, whatever it was
    return summarize(runs, ticker.destinations)


# -- in the service ---------------------------------------------------------------------------
def child_setup(engine: AsyncEngine, config: BotConfig, clock: Clock) -> ChildSetup | None:
    """How to start a planning process on `engine`'s database; None when it cannot be used
    (an in-memory SQLite database, a clock that is not the real one)."""
    url = make_url(engine.url.render_as_string(hide_password=False))
    if url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:"):
        return None
    if clock is not utc_clock:
        return None
    root = logging.getLogger()
    text = any(isinstance(h.formatter, TextFormatter) for h in root.handlers)
    return ChildSetup(
        database_url=url.render_as_string(hide_password=False),
        config=config,
        log_level=logging.getLevelName(root.getEffectiveLevel()),
        log_format="text" if text else "json",
        secrets=tuple(redact.secrets),
    )


class Planner:
    """Runs each tick on the loop or in the planning process (see the module's docstring)."""

    def __init__(self, ticker: DigestTicker, mode: PlannerMode, setup: ChildSetup | None) -> None:
        self.ticker = ticker
        self.mode = mode
        self.setup = setup
        self.destinations = 0  # read by the last tick, wherever it ran
        self.pid: int | None = None  # the planning process's, while it runs
        self._pool: ProcessPoolExecutor | None = None
        self._closed = False  # the service is stopping: no tick plans any more

    def in_process(self) -> bool:
        """Whether the next tick plans in the planning process."""
        if self.setup is None or self.mode is PlannerMode.LOOP:
            return False
        return self.mode is PlannerMode.PROCESS or self.destinations >= PROCESS_FROM

    async def start(self) -> None:
        """Start the planning process now when the first tick will use it (`process`, or
        `auto` on a store that already holds PROCESS_FROM active destinations), so that tick
        neither plans a big store on the loop nor waits for the process to start, and a
        process that cannot start says so at once."""
        if self.setup is not None and self.mode is PlannerMode.AUTO:
            subscriptions = self.ticker.subscriptions
            self.destinations = await subscriptions.active_destinations(PROCESS_FROM)
        if self.in_process() and self._pool is None:
            await self._open()

    async def tick(self) -> TickSummary:
        if self._closed:
            return TickSummary(self.destinations)
        if self.in_process():
            try:
                return await self._tick_in_process()
            except BrokenProcessPool:
                if self._closed:  # stopped under it by close(): the next start plans it
                    return TickSummary(self.destinations)
                log(logger, "scheduler.planner_lost", logging.WARNING, pid=self.pid)
                self._forget_pool()
        runs = await self.ticker.tick()
        self.destinations = self.ticker.destinations
        return summarize(runs, self.destinations)

    async def _tick_in_process(self) -> TickSummary:
        loop = asyncio.get_running_loop()
        pool = self._pool or await self._open()
        done: TickSummary = await loop.run_in_executor(pool, _child_tick)
        self.destinations = done.destinations
        if done.outage is not None:
            raise PlanningOutage(f"the planning process could not reach the store: {done.outage}")
        return done

    async def _open(self) -> ProcessPoolExecutor:
        assert self.setup is not None
        pool = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_child_start,
            initargs=(self.setup,),
        )
        self._pool = pool
        self.pid = await asyncio.get_running_loop().run_in_executor(pool, os.getpid)
        log(logger, "scheduler.planner_started", pid=self.pid)
        return pool

    def _forget_pool(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool, self.pid = None, None

    async def close(self) -> None:
        """Stop the planning process: a tick it is planning gets STOP_SECONDS to finish (each
        batch is its own transaction, so one cut short loses nothing), then SIGTERM."""
        self._closed = True
        pool, pid = self._pool, self.pid
        if pool is None:
            return
        self._pool, self.pid = None, None
        stopping = asyncio.to_thread(pool.shutdown, True, cancel_futures=True)
        try:
            await asyncio.wait_for(stopping, STOP_SECONDS)
        except TimeoutError:
            log(logger, "scheduler.planner_terminated", logging.WARNING, pid=pid)
            if pid is not None:
                os.kill(pid, signal.SIGTERM)
