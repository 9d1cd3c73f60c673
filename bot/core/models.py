"""The words every layer shares: where a message goes, in which language, which part of a
report, in which output format. Config, core, adapters and the CLI all speak these."""

from __future__ import annotations

from enum import StrEnum


class Platform(StrEnum):
    SLACK = "slack"
    TELEGRAM = "telegram"
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
