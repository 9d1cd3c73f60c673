"""The Telegram adapter: a python-telegram-bot `Application` for what comes in.

Long polling by default (one consumer per token; a 409 conflict is logged with the reason and
PTB's retry loop backs off), or a webhook at `POST /telegram/webhook` when
`telegram.webhook_url` is configured (several replicas can share it). No JobQueue: the
service has one scheduler. Digests go out through the outbox (`sender.py`); command replies are
sent straight away, through the same sender and its `ChatPacer`. Updates, polled or posted to
the webhook, pass the platform's bounded work queue first (updates.py, bot/adapters/work.py).

On start: `getMe` (a wrong token stops the service here), the command menu (`setMyCommands`),
then `setWebhook(url, secret_token)` or `deleteWebhook` + polling. If Telegram cannot be
reached, the rest of the service starts anyway and the adapter keeps trying in the background.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from dataclasses import dataclass

from starlette.routing import BaseRoute, Route
from telegram import BotCommand
from telegram.error import Conflict, InvalidToken, TelegramError
from telegram.ext import Application

from bot.adapters.base import AdapterDeps
from bot.adapters.reach import log_unreachable, one_line
from bot.adapters.telegram.busy import TelegramBusy
from bot.adapters.telegram.handlers import TelegramHandlers
from bot.adapters.telegram.polling import PollingLeader
from bot.adapters.telegram.reply import Replier
from bot.adapters.telegram.sender import TelegramSender
from bot.adapters.telegram.updates import (
    WEBHOOK_PATH,
    ChatOrderedProcessor,
    TelegramApp,
    webhook_endpoint,
)
from bot.adapters.work import WorkQueue
from bot.chat.commands import COMMAND_MENU
from bot.core.clock import Clock
from bot.core.models import Locale
from bot.core.render.labels import zh_command
from bot.logs import log, observe
from bot.settings import DEFAULT_TELEGRAM_API_URL, TELEGRAM_WEBHOOK_SECRET_RULE, ConfigError

logger = logging.getLogger("prdigest.telegram")

ALLOWED_UPDATES = ("message", "callback_query", "my_chat_member")
CONFLICT_REASON = "another instance is polling this token; use webhook mode for several replicas"
CONFLICT_LOG_EVERY_SECONDS = 60.0  # a lasting conflict is logged once a minute, with a count
RECONNECT_DELAYS = (5.0, 10.0, 30.0, 60.0, 300.0)
SHUTDOWN_GRACE_SECONDS = 4.0  # answers running at SIGTERM may finish their sends


# The menu in English for everyone, and in Chinese for users whose Telegram speaks it.
MENU_LANGUAGES: tuple[tuple[Locale, str | None], ...] = ((Locale.EN, None), (Locale.ZH, "zh"))


def command_menu(locale: Locale = Locale.EN) -> list[BotCommand]:
    if locale is Locale.ZH:
        return [BotCommand(c.name, zh_command(c.name)[1]) for c in COMMAND_MENU]
    return [BotCommand(command.name, command.description) for command in COMMAND_MENU]


@dataclass(frozen=True)
class Webhook:
    url: str
    secret: str


def webhook_from(url: str | None, secret: str | None) -> Webhook | None:
    """Webhook mode when `telegram.webhook_url` is configured; its secret must be valid."""
    if url is None:
        return None
    if secret is None:
        raise ConfigError("telegram.webhook_url is set but TELEGRAM_WEBHOOK_SECRET is not")
    if not TELEGRAM_WEBHOOK_SECRET_RULE.fullmatch(secret):
        raise ConfigError("TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z a-z 0-9 _ -")
    return Webhook(url, secret)


@dataclass(frozen=True)
class TelegramSettings:
    bot_token: str
    api_url: str
    webhook: Webhook | None = None


def build_application(
    token: str, api_url: str, webhook: bool, processor: ChatOrderedProcessor | None = None
) -> TelegramApp:
    api = api_url.rstrip("/")
    builder = (
        Application.builder()
        .token(token)
        .base_url(f"{api}/bot")
        .base_file_url(f"{api}/file/bot")
        .job_queue(None)
        .concurrent_updates(processor or ChatOrderedProcessor())
    )
    if webhook:
        builder = builder.updater(None)  # the service's web server receives the updates
    return builder.build()


class TelegramAdapter:
    name = "telegram"

    def __init__(
        self,
        app: TelegramApp,
        handlers: TelegramHandlers,
        webhook: Webhook | None,
        clock: Clock,
        api_url: str = DEFAULT_TELEGRAM_API_URL,
        busy: TelegramBusy | None = None,
    ) -> None:
        self.app = app
        processor = app.update_processor
        assert isinstance(processor, ChatOrderedProcessor)
        self.work = processor.work  # the chat work PTB's updates and the webhook's share
        self.busy = busy or TelegramBusy(
            self.work, handlers.renderer, handlers.default_locale, handlers.replier
        )
        processor.on_refused = self.busy.tell
        self.api_url = api_url  # its host names Telegram in "cannot reach ..." (no token)
        self.replier = handlers.replier
        self.chat = handlers.service
        self.webhook = webhook
        self.clock = clock
        handlers.register(app)
        self._reconnect_task: asyncio.Task[None] | None = None
        self._leader: PollingLeader | None = None
        self._leader_task: asyncio.Task[None] | None = None
        self._conflicts = 0
        self._conflict_logged_at = float("-inf")

    @property
    def mode(self) -> str:
        return "webhook" if self.webhook is not None else "polling"

    def routes(self) -> list[BaseRoute]:
        if self.webhook is None:
            return []
        receive = webhook_endpoint(self.app, self.webhook.secret, self.busy.webhook_answer)
        return [Route(WEBHOOK_PATH, receive, methods=["POST"])]

    async def start(self) -> None:
        await self.chat.forget_old_events()
        try:
            await self._connect()
        except InvalidToken:
            raise ConfigError("TELEGRAM_BOT_TOKEN was refused by Telegram (getMe)") from None
        except TelegramError as exc:
            log_unreachable(logger, "telegram", self.api_url, one_line(exc), retry=True)
            self._reconnect_task = asyncio.create_task(self._reconnect())
            observe(self._reconnect_task, logger, "telegram.reconnect_failed")

    async def _connect(self) -> None:
        await self.app.initialize()  # getMe
        bot = self.app.bot
        for locale, language_code in MENU_LANGUAGES:
            await bot.set_my_commands(command_menu(locale), language_code=language_code)
        if self.webhook is not None:
            await bot.set_webhook(
                self.webhook.url,
                secret_token=self.webhook.secret,
                allowed_updates=ALLOWED_UPDATES,
            )
        else:
            updater = self.app.updater
            assert updater is not None
            self._leader = PollingLeader(
                self.chat,
                lambda: updater.start_polling(  # deletes any webhook first
                    allowed_updates=ALLOWED_UPDATES, error_callback=self._polling_error
                ),
                updater.stop,
                lambda: updater.running,
            )
            await self._leader.step()
            self._leader_task = asyncio.create_task(self._leader.run())
            observe(self._leader_task, logger, "telegram.leader_failed")
        await self.app.start()
        log(logger, "telegram.connected", mode=self.mode, bot=bot.username)

    async def _reconnect(self) -> None:
        for attempt in itertools.count():
            await asyncio.sleep(RECONNECT_DELAYS[min(attempt, len(RECONNECT_DELAYS) - 1)])
            try:
                await self._connect()
                return
            except InvalidToken:
                log(logger, "telegram.token_refused", logging.ERROR)
                return
            except TelegramError as exc:
                log_unreachable(logger, "telegram", self.api_url, one_line(exc), retry=True)

    def _polling_error(self, error: TelegramError) -> None:
        """PTB's polling loop calls this and then waits (1 s, growing to 30 s) before retrying."""
        if not isinstance(error, Conflict):
            log(
                logger,
                "telegram.polling_error",
                logging.WARNING,
                error=type(error).__name__,
                detail=str(error),
            )
            return
        self._conflicts += 1
        now = time.monotonic()
        if now - self._conflict_logged_at >= CONFLICT_LOG_EVERY_SECONDS:
            self._conflict_logged_at = now
            log(
                logger,
                "telegram.polling_conflict",
                logging.WARNING,
                reason=CONFLICT_REASON,
                detail=str(error),
                conflicts=self._conflicts,
            )

    def stop_taking_work(self) -> None:
        """On SIGTERM, before the web server winds down: no more updates are taken, the
        queued ones are dropped (one log line counts them); those running go on."""
        self.work.stop_taking()

    async def stop(self) -> None:
        if self._reconnect_task is not None:
            self._reconnect_task.cancel()
        if self._leader_task is not None:
            self._leader_task.cancel()
        self.work.stop_taking()
        self.replier.stop()  # a reply waiting for its turn must not hold up the shutdown
        updater = self.app.updater
        if updater is not None and updater.running:
            await updater.stop()  # confirms the updates already fetched
        await self.work.stop(SHUTDOWN_GRACE_SECONDS)  # sends in flight finish, bounded
        if self.app.running:
            await self.app.stop()  # the fetcher's own tasks: each only queued its update
        await self.app.shutdown()
        if self._leader is not None:
            await self._leader.release()


def build_telegram_adapter(
    deps: AdapterDeps, settings: TelegramSettings, sender: TelegramSender
) -> TelegramAdapter:
    """The adapter `prdigest run` starts when TELEGRAM_BOT_TOKEN is set. Replies go through
    `sender`, the outbox's own: one pace per chat for digests and replies together."""
    handlers = TelegramHandlers(deps, Replier(sender))
    webhook = settings.webhook
    processor = ChatOrderedProcessor(WorkQueue("telegram", deps.work_limits))
    app = build_application(
        settings.bot_token, settings.api_url, webhook=webhook is not None, processor=processor
    )
    return TelegramAdapter(app, handlers, webhook, deps.clock, api_url=settings.api_url)
