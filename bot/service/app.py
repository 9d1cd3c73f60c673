"""Composition root: builds the store, renderer, scheduler, senders and web app; starts/stops.

Start order: destinations synced from config → sources polled once (so the first digest sees
them) → platform adapters → scheduler (digest tick fires at once: catch-up) → delivery loop.
Stop order is the reverse; the delivery loop stops claiming and finishes the send in flight.
At SIGTERM the adapters stop taking chat work at once (queued answers are dropped, one log
line counts them), while the web server finishes the requests in flight; the answers already
running then get what is left of a bounded grace, so the process exits within 10 s.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from pydantic import SecretStr
from starlette.applications import Starlette

from bot.adapters.base import Adapter, AdapterDeps
from bot.adapters.console import ConsoleSender
from bot.chat.answers import Answerer
from bot.chat.service import ChatApp
from bot.core.clock import Clock, utc_clock
from bot.core.delivery.deliverer import Deliverer
from bot.core.delivery.ledger import Claimed, unfinished_count
from bot.core.delivery.port import Outcome, Sender
from bot.core.logs import log, observe
from bot.core.models import Platform
from bot.core.render.renderer import Renderer
from bot.core.store.errors import is_outage
from bot.core.store.runs import last_scheduled_time
from bot.core.store.subscriptions import SubscriptionStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from bot.scheduling.due import next_digest
from bot.scheduling.jobs import build_scheduler
from bot.scheduling.notes import quiet_note
from bot.scheduling.planner import Planner, child_setup, digest_ticker
from bot.scheduling.sources import SourcePoller, make_pollers
from bot.service.context import Context
from bot.settings import ConfigError
from bot.settings.lark import api_url
from bot.web.metrics import Metrics
from bot.web.routes import WebDeps, build_web

if TYPE_CHECKING:  # imported when their platform is on: a service without Slack loads no bolt
    from bot.adapters.lark.adapter import LarkSettings
    from bot.adapters.lark.sender import LarkSender
    from bot.adapters.slack.adapter import SlackSettings
    from bot.adapters.slack.sender import SlackSender
    from bot.adapters.telegram.adapter import TelegramSettings
    from bot.adapters.telegram.sender import TelegramSender

logger = logging.getLogger("prdigest.app")


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _reveal(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


def _token(value: SecretStr | None, name: str) -> str:
    if value is None:
        raise ConfigError(f"{name} is not set")
    return value.get_secret_value()


def slack_settings(ctx: Context) -> SlackSettings:
    """The Slack adapter's settings, from the environment and the config file."""
    from bot.adapters.slack.adapter import SlackSettings

    env = ctx.env
    return SlackSettings(
        bot_token=_token(env.slack_bot_token, "SLACK_BOT_TOKEN"),
        api_url=env.slack_api_url,
        signing_secret=_reveal(env.slack_signing_secret),
        app_token=_reveal(env.slack_app_token),
        admins=tuple(admin.strip() for admin in ctx.config.slack.admins if admin.strip()),
    )


def telegram_settings(ctx: Context) -> TelegramSettings:
    """The Telegram adapter's settings, from the environment and the config file."""
    from bot.adapters.telegram.adapter import TelegramSettings, webhook_from

    env = ctx.env
    token = _token(env.telegram_bot_token, "TELEGRAM_BOT_TOKEN")
    webhook = webhook_from(ctx.config.telegram.webhook_url, _reveal(env.telegram_webhook_secret))
    return TelegramSettings(token, env.telegram_api_url, webhook)


@dataclass(frozen=True)
class Senders:
    """The outbound side: the console always, Slack, Telegram and Lark when their tokens are set.
    The Telegram sender is its adapter's too: replies and digests share one pace per chat."""

    console: ConsoleSender
    slack: SlackSender | None = None
    telegram: TelegramSender | None = None
    lark: LarkSender | None = None

    def by_platform(self) -> dict[Platform, Sender]:
        found: dict[Platform, Sender | None] = {
            Platform.SLACK: self.slack,
            Platform.TELEGRAM: self.telegram,
            Platform.LARK: self.lark,
        }
        senders: dict[Platform, Sender] = {Platform.CONSOLE: self.console}
        senders.update({platform: s for platform, s in found.items() if s is not None})
        return senders


def open_senders(ctx: Context, clock: Clock = utc_clock) -> Senders:
    slack: SlackSender | None = None
    telegram: TelegramSender | None = None
    if ctx.env.slack_bot_token is not None:
        from bot.adapters.slack.sender import SlackSender

        token = ctx.env.slack_bot_token.get_secret_value()
        slack = SlackSender(token, ctx.env.slack_api_url, clock)
    if ctx.env.telegram_bot_token is not None:
        from bot.adapters.telegram.sender import TelegramSender

        token = ctx.env.telegram_bot_token.get_secret_value()
        telegram = TelegramSender(token, ctx.env.telegram_api_url)
    return Senders(ConsoleSender(), slack, telegram, lark_sender(ctx))


def lark_settings(ctx: Context) -> LarkSettings:
    """The Feishu/Lark adapter's settings, from the environment and the config file."""
    from bot.adapters.lark.adapter import LarkSettings
    from bot.adapters.lark.callbacks import LarkSecrets

    env, lark = ctx.env, ctx.config.lark
    if env.lark_app_id is None:
        raise ConfigError("LARK_APP_ID is not set")
    return LarkSettings(
        app_id=env.lark_app_id,
        app_secret=_token(env.lark_app_secret, "LARK_APP_SECRET"),
        api_url=api_url(lark.domain, env.lark_api_url),
        receive=lark.receive,
        secrets=LarkSecrets(
            _reveal(env.lark_verification_token) or None, _reveal(env.lark_encrypt_key) or None
        ),
        admins=tuple(admin.strip() for admin in lark.admins if admin.strip()),
    )


def lark_sender(ctx: Context) -> LarkSender | None:
    """The Feishu/Lark sender when LARK_APP_ID and LARK_APP_SECRET are set. Imported only
    then: the SDK is large."""
    env = ctx.env
    if env.lark_app_id is None or env.lark_app_secret is None:
        return None
    from bot.adapters.lark.client import LarkClient
    from bot.adapters.lark.sender import LarkSender

    url = api_url(ctx.config.lark.domain, env.lark_api_url)
    secret = env.lark_app_secret.get_secret_value()
    return LarkSender(LarkClient(env.lark_app_id, secret, url))


def build_senders(ctx: Context, clock: Clock = utc_clock) -> dict[Platform, Sender]:
    """Every platform's sender, for the outbox."""
    return open_senders(ctx, clock).by_platform()


def build_adapters(ctx: Context, deps: AdapterDeps, senders: Senders) -> list[Adapter]:
    """The inbound adapters for every platform that has credentials."""
    adapters: list[Adapter] = []
    if senders.slack is not None:  # both made when their platform's token is set
        from bot.adapters.slack.adapter import SlackAdapter

        adapters.append(SlackAdapter(deps, slack_settings(ctx)))
    if senders.telegram is not None:
        from bot.adapters.telegram.adapter import build_telegram_adapter

        adapters.append(build_telegram_adapter(deps, telegram_settings(ctx), senders.telegram))
    if senders.lark is not None:  # one client (one tenant token) for digests and answers
        from bot.adapters.lark.adapter import LarkAdapter

        adapters.append(LarkAdapter(deps, lark_settings(ctx), senders.lark.client))
    return adapters


@dataclass
class Service:
    """Everything `prdigest run` runs, in one asyncio process."""

    ctx: Context
    clock: Clock = utc_clock
    metrics: Metrics = field(default_factory=Metrics)
    renderer: Renderer = field(default_factory=Renderer)

    def __post_init__(self) -> None:
        self.destinations = DestinationStore(self.ctx.engine, self.clock)
        self.pollers = make_pollers(
            list(self.ctx.config.sources), self.ctx.reports, self.ctx.tag_rules
        )
        self.subscriptions = SubscriptionStore(self.ctx.engine, self.clock)
        self.ticker = digest_ticker(
            self.ctx.engine, self.ctx.config, self.renderer, self.clock, self.subscriptions
        )
        self.planner = Planner(
            self.ticker,
            self.ctx.config.delivery.planner,
            child_setup(self.ctx.engine, self.ctx.config, self.clock),
        )
        senders = open_senders(self.ctx, self.clock)
        self.console = senders.console
        self.senders = senders.by_platform()
        self.deliverer = Deliverer(
            self.ctx.engine,
            self.senders,
            worker_id(),
            self.clock,
            self._on_result,
            lease=timedelta(seconds=self.ctx.config.delivery.lease_seconds),
        )
        self.answerer = Answerer(
            self.ctx.reports,
            self.destinations,
            self.ctx.config,
            clock=self.clock,
            renderer=self.renderer,
        )
        # One Answerer for every platform: `/pr 7422 risks` and `/risks 7422` agree.
        self.chat = ChatApp(self.answerer, self.clock)
        self.adapter_deps = AdapterDeps(chat=self.chat, renderer=self.renderer, clock=self.clock)
        self.adapters = build_adapters(self.ctx, self.adapter_deps, senders)
        self.scheduler: AsyncIOScheduler | None = None
        self._delivery_task: asyncio.Task[None] | None = None

    def _on_result(self, row: Claimed, outcome: Outcome) -> None:
        self.metrics.record_delivery(row, outcome, self.clock().timestamp())

    async def _tick(self) -> None:
        """Plan what is due. While the store cannot be reached the tick says so in one line
        and the next tick tries again (missed fires coalesce into one catch-up); any other
        error is a bug and keeps its traceback."""
        try:
            planned = await self.planner.tick()
            depth = await unfinished_count(self.ctx.engine)
        except Exception as error:
            if not is_outage(error):
                raise
            log(logger, "scheduler.store_unavailable", logging.WARNING, error=type(error).__name__)
            return
        for status, count in planned.by_status.items():
            self.metrics.digests_run.labels(status).inc(count)
        self.metrics.outbox_depth.set(depth)

    async def _poll(self, poller: SourcePoller) -> None:
        try:
            result = await poller.poll()
        except Exception as error:  # the store is unavailable: the next poll tries again
            log(
                logger,
                "source.poll_failed",
                logging.WARNING,
                source=poller.name,
                error=type(error).__name__,
            )
            return
        for item in result.results:
            self.metrics.reports_ingested.labels(item.outcome.value).inc()
        if result.failures:
            self.metrics.reports_ingested.labels("failed").inc(len(result.failures))

    async def announce_schedules(self) -> None:
        """One line per subscription: when it last got a digest and when the next one is due,
        so a restart that has nothing to catch up on does not look like silence."""
        now = self.clock()
        for dest in await self.subscriptions.all(active_only=True):
            calendar = self.ticker.calendars.for_subscription(dest)
            found = next_digest(dest, now, calendar)
            upcoming = found.at if found is not None else None
            last = await last_scheduled_time(self.ctx.engine, dest.id)
            log(
                logger,
                "destination.schedule",
                destination=dest.label,
                last_digest=last.isoformat() if last else None,
                next_digest=upcoming.isoformat() if upcoming else None,
            )
            if dest.platform is Platform.CONSOLE:
                note = await quiet_note(self.ctx.reports, dest, now, last, calendar)
                if note is not None:
                    await self.console.note(dest.target, f"{dest.label}: {note}")

    def is_ready(self) -> bool:
        return self.scheduler is not None and self.scheduler.running

    async def start(self) -> None:
        synced = await self.subscriptions.sync_config(self.ctx.config)
        log(
            logger,
            "service.starting",
            destinations=[d.label for d in synced],
            platforms=[p.value for p in self.senders],
        )
        for poller in self.pollers:
            await self._poll(poller)
        await self.announce_schedules()
        for adapter in self.adapters:
            await adapter.start()
            log(logger, "adapter.started", adapter=adapter.name)
        polls = [(partial(self._poll, p), p.source.interval_seconds) for p in self.pollers]
        self.scheduler = build_scheduler(
            self.ctx.config.timezone, self._tick, polls, self.ctx.config.delivery.tick_seconds
        )
        await self.planner.start()
        self.scheduler.start()
        self._delivery_task = asyncio.create_task(self.deliverer.run_forever())
        observe(self._delivery_task, logger, "delivery.stopped_by_error")

    def stop_taking_work(self) -> None:
        """At SIGTERM, before the web server winds down: no adapter takes more chat work."""
        for adapter in self.adapters:
            adapter.stop_taking_work()

    async def stop(self) -> None:
        if self.scheduler is not None and self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        self.deliverer.stop()
        if self._delivery_task is not None:
            await self._delivery_task
        await self.planner.close()
        # Side by side: each adapter's grace for its answers running overlaps the others'.
        await asyncio.gather(*(adapter.stop() for adapter in reversed(self.adapters)))
        log(logger, "service.stopped")

    def web(self) -> Starlette:
        @asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            await self.start()
            try:
                yield
            finally:
                await self.stop()

        deps = WebDeps(
            store=self.ctx.reports,
            metrics=self.metrics,
            rules=self.ctx.tag_rules,
            ingest_token=(
                self.ctx.env.ingest_token.get_secret_value() if self.ctx.env.ingest_token else None
            ),
            is_ready=self.is_ready,
        )
        routes = [route for adapter in self.adapters for route in adapter.routes()]
        return build_web(deps, routes, lifespan)
