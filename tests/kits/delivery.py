"""Test kit for the delivery engine: a fake clock, a scripted recording sender, report makers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.clock import Clock, utc_clock
from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.port import Outcome, Sent, Turn, Withheld
from bot.core.digest.select import DigestFilter
from bot.core.models import Locale, Platform
from bot.core.reports.model import Report
from bot.core.store.reports import ReportStore, newest_seq
from bot.core.store.subscriptions import (
    DEFAULT_CHAT_SCHEDULE,
    NewSubscription,
    Subscription,
    SubscriptionStore,
)
from bot.settings import BotConfig, Channel


async def right_away() -> bool:
    """A turn that never waits, for senders called directly."""
    return True


class FakeClock:
    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 9, 1, 1, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class Call:
    at: datetime
    target: str
    payload: Mapping[str, object]


@dataclass
class ScriptedSender:
    """Records every send; answers from a per-target script, then Sent."""

    clock: FakeClock
    platform: Platform = Platform.CONSOLE
    max_per_second: float = 10_000.0
    interval: float = 1.0
    calls: list[Call] = field(default_factory=list)
    scripts: dict[str, list[Outcome]] = field(default_factory=dict)

    def interval_for(self, target: str) -> float:
        return self.interval

    async def send(self, target: str, payload: Mapping[str, object], turn: Turn) -> Outcome:
        if not await turn():
            return Withheld()
        self.calls.append(Call(self.clock(), target, payload))
        script = self.scripts.get(target)
        if script:
            return script.pop(0)
        return Sent(f"m{len(self.calls)}")

    def to(self, target: str) -> list[Call]:
        return [c for c in self.calls if c.target == target]


def report(
    number: int,
    *,
    repo: str = "verl-project/verl",
    tags: list[str] | None = None,
    summary: str | None = None,
) -> Report:
    chosen = tags if tags is not None else ["rollout", "fix"]
    return Report(
        repo=repo,
        number=number,
        title=f"[{chosen[0] if chosen else 'misc'}] fix: change number {number}",
        url=f"https://github.com/{repo}/pull/{number}",
        summary=summary or f"one-liner {number}",
        recommendation="值得精读。",
        tags=chosen,
    )


def channel(name: str, target: str, **extra: object) -> Channel:
    values: dict[str, object] = {
        "name": name,
        "platform": "console",
        "target": target,
        "schedule": "0 9 * * *",
        "timezone": "UTC",
        "locale": "en",
    }
    values.update(extra)
    return Channel.model_validate(values)


# When the config channels of `setup_destinations` were made: long before the tests' fake
# times, so a first tick catches up its latest fire as for a channel that has been there.
LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)


async def setup_destinations(
    engine: AsyncEngine, *channels: Channel, made_at: datetime = LONG_AGO
) -> list[Subscription]:
    store = SubscriptionStore(engine, clock=lambda: made_at)
    return await store.sync_config(BotConfig(channels=list(channels)))


async def add_reports(store: ReportStore, numbers: range | list[int], **kw: object) -> None:
    await store.upsert_many([(report(n, **kw), "") for n in numbers])  # type: ignore[arg-type]


async def run_until_idle(
    deliverer: Deliverer,
    clock: FakeClock,
    seconds: int,
    step: float = 1.0,
) -> None:
    """Advance the fake clock step by step, delivering whatever is due at each step."""
    for _ in range(int(seconds / step)):
        await deliverer.run_once()
        clock.advance(step)


async def save_chat(
    engine: AsyncEngine,
    platform: Platform,
    target: str,
    flt: DigestFilter,
    *,
    schedule: str = DEFAULT_CHAT_SCHEDULE,
    timezone: str = "UTC",
    locale: Locale = Locale.EN,
    clock: Clock = utc_clock,
) -> Subscription:
    """A chat's own subscription, as `subscribe` makes it (straight into the store)."""
    new = NewSubscription(
        name=flt.query or " ".join(flt.tags) or "all",
        filter=flt,
        schedule=schedule,
        cadence=schedule,
        timezone=timezone,
        locale=locale,
        owner=None,
        actor="test",
    )
    return await SubscriptionStore(engine, clock).add(platform, target, new)


async def newest_seq_of(store: ReportStore) -> int:
    """The store's newest report seq: the watermark a digest of everything moves to."""
    async with store.engine.connect() as conn:
        return await newest_seq(conn)
