"""Configuration: `config/bot.yaml` (validated, frozen) plus secrets from the environment.

Unknown keys are rejected with their path and a did-you-mean (`channels.verl-daily.tag: unknown
key; did you mean 'tags'?`), so a typo fails at start instead of silently doing nothing.
Secrets never live in the YAML: `slack.bot_token` there is told to use SLACK_BOT_TOKEN.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    model_validator,
)

from bot.core.calendar import CalendarBook
from bot.core.digest.select import DigestFilter
from bot.core.models import Layout, Locale, Platform, Verbosity
from bot.core.query.reading import tag_text
from bot.core.store.subscriptions.config import TITLE_MAX, ChannelSpec
from bot.settings.calendars import CalendarConfig, calendar_book, shared_calendar_problem
from bot.settings.errors import ConfigError as ConfigError
from bot.settings.errors import describe_config_error
from bot.settings.lark import LarkConfig, target_problem
from bot.settings.planner import PlannerMode
from bot.settings.search import SearchConfig
from bot.settings.values import (
    ChannelQuery,
    ChatId,
    Cron,
    HolidaysSwitch,
    Repo,
    Tag,
    Timezone,
    UrgentSwitch,
    WebhookURL,
    read_cadence,
)
from bot.settings.work import ChatWorkConfig
from bot.settings.yaml_file import read_yaml

DEFAULT_CONFIG_PATH = Path("config/bot.yaml")
DEFAULT_DATABASE_URL = "sqlite:///data/bot.db"
DEFAULT_SLACK_API_URL = "https://slack.com/api/"
DEFAULT_TELEGRAM_API_URL = "https://api.telegram.org"
DEFAULT_HTTP_HOST = "127.0.0.1"
DEFAULT_HTTP_PORT = 8080
# Telegram's setWebhook rules (docs/telegram.md): HTTPS on one of these ports, and a secret
# token of 1-256 characters from A-Z a-z 0-9 _ -.
TELEGRAM_WEBHOOK_SECRET_RULE = re.compile(r"[A-Za-z0-9_-]{1,256}")
LARK_NAMES = ("app_id", "app_secret", "verification_token", "encrypt_key", "api_url")
# Env field → the variable it is read from (Env.from_environ spells the same pairs out).
ENV_VARS: dict[str, str] = {
    "database_url": "BOT_DATABASE_URL",
    "slack_bot_token": "SLACK_BOT_TOKEN",
    "slack_signing_secret": "SLACK_SIGNING_SECRET",
    "slack_app_token": "SLACK_APP_TOKEN",
    "slack_api_url": "SLACK_API_URL",
    "telegram_bot_token": "TELEGRAM_BOT_TOKEN",
    "telegram_api_url": "TELEGRAM_API_URL",
    "telegram_webhook_secret": "TELEGRAM_WEBHOOK_SECRET",
    **{f"lark_{n}": f"LARK_{n.upper()}" for n in LARK_NAMES},
    "ingest_token": "BOT_INGEST_TOKEN",
    "http_host": "BOT_HTTP_HOST",
    "http_port": "BOT_HTTP_PORT",
}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Source(_Frozen):
    """Where reports come from: a directory polled for files, or a URL."""

    dir: Path | None = None
    url: str | None = None
    interval_seconds: int = Field(60, ge=5)

    @model_validator(mode="after")
    def _one_of(self) -> Self:
        if (self.dir is None) == (self.url is None):
            raise ValueError("a source needs exactly one of `dir` or `url`")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"source url {self.url!r} must be http(s)")
        return self


class TagRuleConfig(_Frozen):
    """Labeler-style rule: a key file matching any glob in `paths` gives `tag`."""

    paths: list[str] = Field(min_length=1)
    tag: Tag


class SlackConfig(_Frozen):
    admins: list[str] = Field(default_factory=list)


class TelegramConfig(_Frozen):
    webhook_url: WebhookURL | None = None


class DeliveryConfig(_Frozen):
    """How the service schedules and sends; the defaults suit production."""

    tick_seconds: float = Field(15.0, ge=0.2, le=300)  # how often due digests are looked for
    lease_seconds: float = Field(60.0, ge=1, le=3600)  # a claimed message's lease
    planner: PlannerMode = PlannerMode.AUTO


class ReadingConfig(_Frozen):
    """The reading state's durations, in days: how long an unread must-read PR rolls
    into the next digests, and how long the Snooze and Mute buttons last."""

    unread_days: int = Field(7, ge=1, le=30)  # within the runs' retention (30 days)
    snooze_days: int = Field(7, ge=1, le=90)
    mute_days: int = Field(7, ge=1, le=90)


class SubscriptionLimitsConfig(_Frozen):
    """How many subscriptions chats may make (config channels are not counted)."""

    per_destination: int = Field(50, ge=1, le=10_000)  # in one channel, group or DM
    per_person: int = Field(200, ge=1, le=100_000)  # a person's own, across their DMs


class Channel(_Frozen):
    """One digest destination and what it wants to read: reports of `repos` (any if none)
    with one of `tags` (any if none), none of `exclude_tags`, that `query` matches (the query
    language; all four ANDed, select.DigestFilter)."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    platform: Platform
    target: ChatId
    schedule: Cron = "0 9 * * mon-fri"
    timezone: Timezone | None = None
    repos: list[Repo] = Field(default_factory=list)
    tags: list[Tag] = Field(default_factory=list)
    exclude_tags: list[Tag] = Field(default_factory=list)
    query: ChannelQuery | None = None
    max_items: int = Field(30, ge=1, le=500)
    locale: Locale | None = None  # None: the config's top-level `locale` (BotConfig.channel_locale)
    post_empty: bool = False
    # `cadence:` (or `schedule:`, not both): a cron, `daily 09:00`, `workdays 09:30`,
    # `weekly fri 17:00` or `now`; read into `schedule` (a cron, or "now"), kept as written.
    cadence: str | None = None
    # flat | threaded (a summary, one reply per tag group) | topics (Telegram forum topics)
    layout: Layout = Layout.FLAT
    verbosity: Verbosity = Verbosity.STANDARD  # oneline | standard | full
    locked: bool = False  # the chat may not change this destination's subscriptions
    calendar: CalendarConfig | None = None  # its destination's, over the top level key by key
    # This channel's own switches over its destination's calendar (docs/calendar.md): an
    # urgent one is not held by quiet time (quiet hours, an ICS file's timed events), and one
    # with `holidays: false` not by the holidays; the other channels of the target still are.
    urgent: UrgentSwitch = False
    holidays: HolidaysSwitch = True
    # What the digest header calls the destination ("RL team"); None: the repo it follows.
    title: str | None = Field(None, min_length=1, max_length=TITLE_MAX)
    unread_days: int | None = Field(None, ge=1, le=30)  # None: `reading.unread_days`

    @model_validator(mode="before")
    @classmethod
    def _cadence(cls, data: Any) -> Any:
        return read_cadence(data)

    def digest_filter(self, query: str | None = None) -> DigestFilter:
        """The channel's filter; `query` in place of its `query:` (its known tags read)."""
        return DigestFilter(
            repos=tuple(self.repos),
            tags=tuple(self.tags),
            exclude_tags=tuple(self.exclude_tags),
            max_items=self.max_items,
            query=self.query or "" if query is None else query,
        )

    @model_validator(mode="after")
    def _topics_need_telegram(self) -> Self:
        if self.layout is Layout.TOPICS and self.platform is not Platform.TELEGRAM:
            raise ValueError(
                f"layout: topics are Telegram forum topics; on {self.platform.value} use"
                " layout: threaded (a summary with one reply per tag group) or flat"
            )
        if self.platform is Platform.LARK and (problem := target_problem(self.target)):
            raise ValueError(problem)
        return self


class BotConfig(_Frozen):
    timezone: Timezone = "Asia/Shanghai"
    # The one language default: channels without their own, `prdigest pr` without --locale,
    # and chats with no destination (after a Telegram user's own language) read this.
    locale: Locale = Locale.ZH
    sources: list[Source] = Field(default_factory=list)
    tag_rules: list[TagRuleConfig] = Field(default_factory=list)
    slack: SlackConfig = SlackConfig()
    telegram: TelegramConfig = TelegramConfig()
    lark: LarkConfig = LarkConfig()  # Feishu/Lark: bot/settings/lark.py
    channels: list[Channel] = Field(default_factory=list)
    delivery: DeliveryConfig = DeliveryConfig()
    calendar: CalendarConfig | None = None  # every destination's, unless its channel has one
    reading: ReadingConfig = ReadingConfig()
    subscription_limits: SubscriptionLimitsConfig = SubscriptionLimitsConfig()
    chat_work: ChatWorkConfig = ChatWorkConfig()  # per platform: bot/settings/work.py
    search: SearchConfig = SearchConfig()  # every query's budget: bot/settings/search.py

    @model_validator(mode="after")
    def _one_calendar_per_destination(self) -> Self:
        problem = shared_calendar_problem(self.calendar, self.channels)
        if problem is not None:
            raise ValueError(problem)
        return self

    @model_validator(mode="after")
    def _unique_channel_names(self) -> Self:
        first: dict[str, int] = {}
        for index, channel in enumerate(self.channels):
            seen = first.setdefault(channel.name, index)
            if seen != index:
                raise ValueError(
                    f"channels[{index}].name: {channel.name!r} is already channels[{seen}].name"
                    " (names are unique)"
                )
        return self

    def channel(self, name: str) -> Channel:
        for channel in self.channels:
            if channel.name == name:
                return channel
        known = ", ".join(c.name for c in self.channels) or "none configured"
        raise ConfigError(f"no channel named {name!r} (known: {known})")

    def channel_timezone(self, channel: Channel) -> str:
        return channel.timezone or self.timezone

    def channel_locale(self, channel: Channel) -> Locale:
        return channel.locale or self.locale

    def channel_specs(self) -> tuple[ChannelSpec, ...]:
        """The channels as the subscription store syncs them, in plain values."""
        return tuple(
            ChannelSpec(
                platform=channel.platform,
                target=channel.target,
                name=channel.name,
                filter=channel.digest_filter(),
                schedule=channel.schedule,
                cadence=channel.cadence or channel.schedule,
                timezone=self.channel_timezone(channel),
                locale=self.channel_locale(channel),
                layout=channel.layout,
                verbosity=channel.verbosity,
                post_empty=channel.post_empty,
                locked=channel.locked,
                urgent=channel.urgent,
                holidays=channel.holidays,
                title=channel.title,
            )
            for channel in self.channels
        )

    def rule_tags(self) -> frozenset[str]:
        """The tags the config's tag rules give, as the query language compares them."""
        return frozenset(tag_text(rule.tag) for rule in self.tag_rules)

    def calendars(self) -> CalendarBook:
        """Each destination's working calendar (bot/settings/calendars.py)."""
        return calendar_book(self.calendar, self.channels)


class Env(_Frozen):
    """Everything read from the environment. Secrets are SecretStr so they never print."""

    config_path: Path | None = None
    database_url: str = DEFAULT_DATABASE_URL
    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_api_url: str = DEFAULT_SLACK_API_URL
    telegram_bot_token: SecretStr | None = None
    telegram_api_url: str = DEFAULT_TELEGRAM_API_URL
    telegram_webhook_secret: SecretStr | None = None
    lark_app_id: str | None = None
    lark_app_secret: SecretStr | None = None
    lark_verification_token: SecretStr | None = None
    lark_encrypt_key: SecretStr | None = None
    lark_api_url: str | None = None  # None: the `lark.domain`'s Open API
    ingest_token: SecretStr | None = None
    http_host: str = DEFAULT_HTTP_HOST
    http_port: int = Field(DEFAULT_HTTP_PORT, ge=0, le=65535)

    @property
    def slack_enabled(self) -> bool:
        return self.slack_bot_token is not None

    @property
    def telegram_enabled(self) -> bool:
        return self.telegram_bot_token is not None

    @property
    def lark_enabled(self) -> bool:
        return self.lark_app_id is not None and self.lark_app_secret is not None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Env:
        env = os.environ if environ is None else environ

        def get(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        # BOT_CONFIG unset: config/bot.yaml if it exists; set but empty: the built-in defaults.
        explicit = get("BOT_CONFIG")
        config_path = Path(explicit) if explicit else None
        if "BOT_CONFIG" not in env and DEFAULT_CONFIG_PATH.exists():
            config_path = DEFAULT_CONFIG_PATH
        # Spelled out (deploy tests read these names from the source); ENV_VARS must agree.
        read: dict[str, tuple[str, str | None]] = {
            "database_url": ("BOT_DATABASE_URL", get("BOT_DATABASE_URL")),
            "slack_bot_token": ("SLACK_BOT_TOKEN", get("SLACK_BOT_TOKEN")),
            "slack_signing_secret": ("SLACK_SIGNING_SECRET", get("SLACK_SIGNING_SECRET")),
            "slack_app_token": ("SLACK_APP_TOKEN", get("SLACK_APP_TOKEN")),
            "slack_api_url": ("SLACK_API_URL", get("SLACK_API_URL")),
            "telegram_bot_token": ("TELEGRAM_BOT_TOKEN", get("TELEGRAM_BOT_TOKEN")),
            "telegram_api_url": ("TELEGRAM_API_URL", get("TELEGRAM_API_URL")),
            "telegram_webhook_secret": ("TELEGRAM_WEBHOOK_SECRET", get("TELEGRAM_WEBHOOK_SECRET")),
            "lark_app_id": ("LARK_APP_ID", get("LARK_APP_ID")),
            "lark_app_secret": ("LARK_APP_SECRET", get("LARK_APP_SECRET")),
            "lark_verification_token": ("LARK_VERIFICATION_TOKEN", get("LARK_VERIFICATION_TOKEN")),
            "lark_encrypt_key": ("LARK_ENCRYPT_KEY", get("LARK_ENCRYPT_KEY")),
            "lark_api_url": ("LARK_API_URL", get("LARK_API_URL")),
            "ingest_token": ("BOT_INGEST_TOKEN", get("BOT_INGEST_TOKEN")),
            "http_host": ("BOT_HTTP_HOST", get("BOT_HTTP_HOST")),
            "http_port": ("BOT_HTTP_PORT", get("BOT_HTTP_PORT")),
        }
        values = {field: value for field, (_, value) in read.items() if value is not None}
        try:
            return cls.model_validate({"config_path": config_path, **values})
        except ValidationError as exc:
            lines = ["invalid environment:"]
            for error in exc.errors():
                loc = [str(part) for part in error["loc"]]
                if loc and loc[0] in read:
                    loc[0] = read[loc[0]][0]
                lines.append(f"  {'.'.join(loc) or '(top level)'}: {error['msg']}")
            raise ConfigError("\n".join(lines)) from exc


# The variables whose Env field is a secret: the config is told they come from there.
SECRET_VARS = frozenset(
    ENV_VARS[name]
    for name, field in Env.model_fields.items()
    if SecretStr in get_args(field.annotation)
)


def default_config() -> BotConfig:
    """The embedded default: the sample reports and a console channel that prints the digest."""
    return BotConfig(
        sources=[Source(dir=Path("examples/reports"))],
        tag_rules=[TagRuleConfig(paths=["verl/workers/rollout/**"], tag="rollout")],
        channels=[
            Channel(
                name="console",
                platform=Platform.CONSOLE,
                target="stdout",
                # Each new report as it arrives: the samples print at the first start, at any
                # hour (a cron's first digest waits for its next fire on the day it is made).
                schedule="now",
            )
        ],
    )


def load_config(path: Path | None) -> BotConfig:
    """Read and validate a config file; None means the built-in defaults."""
    if path is None:
        return default_config()
    data = read_yaml(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys")
    try:
        return BotConfig.model_validate(data)
    except ValidationError as exc:
        where = f"config {path}"
        raise ConfigError(
            describe_config_error(exc, where, data, BotConfig, ENV_VARS, SECRET_VARS)
        ) from exc
