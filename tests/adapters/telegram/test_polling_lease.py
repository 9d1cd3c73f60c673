"""Long polling runs on one replica only; a second one refuses with the reason."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from bot.adapters.telegram.polling import POLL_LEASE, PollingLeader
from bot.chat.answers import Answerer
from bot.chat.service import ChatApp
from bot.core.clock import utc_clock
from bot.core.store.leases import take
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from bot.settings import BotConfig
from tests.fakes.telegram.api import FakeTelegram
from tests.kits.proc import BotProcess


class FakeUpdater:
    def __init__(self) -> None:
        self.running = False

    async def start(self) -> None:
        self.running = True

    async def stop(self) -> None:
        self.running = False


def _leader(store: ReportStore, updater: FakeUpdater) -> PollingLeader:
    answerer = Answerer(store, DestinationStore(store.engine), BotConfig(), clock=utc_clock)
    chat = ChatApp(answerer, utc_clock)
    return PollingLeader(chat, updater.start, updater.stop, lambda: updater.running)


async def test_only_the_lease_holder_polls_and_a_standby_takes_over(
    store: ReportStore, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = FakeUpdater(), FakeUpdater()
    one, two = _leader(store, first), _leader(store, second)
    two.holder = "other-host:2"
    await one.step()
    await two.step()
    assert (first.running, second.running) == (True, False)
    [refused] = [r for r in caplog.records if r.getMessage() == "telegram.polling_refused"]
    assert "webhook_url" in refused.fields["reason"]  # type: ignore[attr-defined]
    # the first replica dies without releasing: after its lease expires the standby takes over
    later = datetime.now(UTC) + timedelta(minutes=5)
    assert await take(store.engine, POLL_LEASE, two.holder, later, timedelta(seconds=30)) is None
    await one.step()
    assert not first.running, "the old holder stops polling when it finds the lease gone"


@pytest.mark.slow
async def test_a_second_polling_replica_refuses_and_never_conflicts(
    subprocess_env: dict[str, str],
) -> None:
    async with FakeTelegram() as fake:
        env = {
            **subprocess_env,
            "TELEGRAM_BOT_TOKEN": fake.token,
            "TELEGRAM_API_URL": fake.url,
            "PTB_TIMEDELTA": "true",
        }
        replicas = [BotProcess(dict(env)) for _ in range(2)]
        try:
            for bot in replicas:
                await bot.start()
                await bot.wait_ready()
            await asyncio.sleep(3)
            # (stopping a poller confirms its offset with one more getUpdates, which ends its own
            # long poll with a 409 on the real API too: count conflicts while both run)
            conflicts = [c for c in fake.calls("getUpdates") if c.status == 409]
        finally:
            for bot in replicas:
                await bot.terminate()
    logs = [bot.stderr.decode() for bot in replicas]
    assert sum("telegram.polling_started" in log for log in logs) == 1
    refused = [log for log in logs if "telegram.polling_refused" in log]
    assert len(refused) == 1
    assert "telegram.webhook_url" in refused[0]
    assert conflicts == []
