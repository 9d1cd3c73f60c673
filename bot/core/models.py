"""The words every layer shares: where a message goes, in which language, which part of a
report, in which output format. Config, core, adapters and the CLI all speak these."""

from __future__ import annotations

from enum import StrEnum


class Platform(StrEnum):
    SLACK = "slack"
    TELEGRAM = "telegram"
    LARK = "lark"  # Feishu (open.feishu.cn) or Lark (open.larksuite.com)
    CONSOLE = "console"


class Locale(StrEnum):
    ZH = "zh"
    EN = "en"


class Section(StrEnum):
    SUMMARY = "summary"
    RISKS = "risks"
    FILES = "files"
    RELATED = "related"
    MOTIVATION = "motivation"
    IMPL = "impl"
    COMMENTS = "comments"
    FULL = "full"


class Format(StrEnum):
    TEXT = "text"
    SLACK = "slack"
    TELEGRAM = "telegram"
    LARK = "lark"  # interactive card JSON


class Layout(StrEnum):
    """How a subscription's digest is laid out in the chat."""

    FLAT = "flat"  # every message in the channel, one after another
    THREADED = "threaded"  # a summary message, then one reply per tag group under it
    TOPICS = "topics"  # Telegram forum supergroups: one forum topic per tag


class Verbosity(StrEnum):
    """How much of each PR a digest shows."""

    ONELINE = "oneline"  # one line per PR
    STANDARD = "standard"  # title, summary, the recommendation's lead, impact and flags
    FULL = "full"  # standard, with the recommendation's numbered points


class Origin(StrEnum):
    """Where a subscription comes from."""

    CONFIG = "config"  # a `channels[]` entry of the config file, synced in
    CHAT = "chat"  # made from a chat (`subscribe`) or a `prdigest subscriptions import`
