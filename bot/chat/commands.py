"""The one command table, and the parser every platform shares.

Slack's `/pr 7422 risks` and `/pr subscribe rollout`, Telegram's `/risks 7422` and
`/subscribe rollout -ci`, and mentions like "@prdigest show risks for #7422" or "#7422 的风险"
all become a typed request (`bot/chat/requests.py`). Parsing is pure; `bot/chat/answers.py`
answers requests with data that the templates turn into words.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.chat.requests import (
    Ask,
    Find,
    OpenPicker,
    Request,
    SetSchedule,
    ShowReport,
    Subscribe,
    TrySubscribe,
    TypedQuery,
    Unsubscribe,
    Verb,
)
from bot.core.models import Platform, Section
from bot.core.query import QueryError
from bot.core.query import parse as parse_query
from bot.core.reports.refs import BadRefError, parse_ref
from bot.core.timing.cadence_words import canonical_cadence
from bot.core.timing.schedules import clock_cron, is_days


@dataclass(frozen=True, slots=True)
class CommandSpec:
    verb: Verb
    usage: str  # arguments after the command, e.g. "7422 [section]"
    description: str  # the command menu's one line (English; Telegram's setMyCommands)
    admin_only: bool = False


COMMAND_TABLE: tuple[CommandSpec, ...] = (
    CommandSpec(Verb.PR, "7422 [section]", "Show a PR's report: summary, risks, files…"),
    CommandSpec(Verb.FIND, "QUERY", "Find reports: words, tag:, risk:, file:, impact:…"),
    CommandSpec(Verb.TAGS, "", "Known tags, with counts over the last 30 days"),
    CommandSpec(Verb.DIGEST, "", "This chat's next digest, now"),
    CommandSpec(
        Verb.SUBSCRIBE,
        "QUERY [at CADENCE] | test QUERY [at CADENCE]",
        "Add a digest of a query; test: replay it over 30 days",
        True,
    ),
    CommandSpec(Verb.UNSUBSCRIBE, "N...|all", "Remove subscriptions by number, or all", True),
    CommandSpec(Verb.SUBSCRIPTIONS, "", "This chat's subscriptions, numbered"),
    CommandSpec(Verb.SCHEDULE, '09:00 [TZ] | "0 9 * * mon-fri" [TZ]', "When digests arrive", True),
    CommandSpec(Verb.STATUS, "", "Delivery status of this chat"),
    CommandSpec(Verb.UNREAD, "", "Must-read PRs shown here that nobody marked read"),
    CommandSpec(Verb.MORE, "", 'The next page of the latest digest\'s "+N more"'),
    CommandSpec(Verb.HELP, "", "How to use prdigest"),
)
SPECS = {spec.verb: spec for spec in COMMAND_TABLE}
# Other names a command answers to (not in the menu or the help): `/search` is `/find`.
VERB_ALIASES: dict[str, Verb] = {"search": Verb.FIND}


@dataclass(frozen=True, slots=True)
class Shortcut:
    """`/risks 7422` is `/pr 7422 risks`: a command of its own in Telegram, a word after
    `/pr` in Slack."""

    name: str
    section: Section
    description: str  # the command menu's one line


SHORTCUT_TABLE: tuple[Shortcut, ...] = (
    Shortcut("risks", Section.RISKS, "A PR's risk flags and impact: /risks 7422"),
    Shortcut("files", Section.FILES, "A PR's key files: /files 7422"),
    Shortcut("related", Section.RELATED, "PRs related to a PR: /related 7422"),
    Shortcut("summary", Section.SUMMARY, "A PR's one-line summary and advice: /summary 7422"),
)
SECTION_SHORTCUTS = {shortcut.name: shortcut.section for shortcut in SHORTCUT_TABLE}
# `/start` is not in the table (help does not list it), but every menu shows it first.
START = CommandSpec(Verb.START, "", "What this bot does")


@dataclass(frozen=True, slots=True)
class MenuEntry:
    name: str
    description: str


def _menu() -> tuple[MenuEntry, ...]:
    menu = [MenuEntry(START.verb.value, START.description)]
    for spec in COMMAND_TABLE:
        menu.append(MenuEntry(spec.verb.value, spec.description))
        if spec.verb is Verb.PR:
            menu += [MenuEntry(s.name, s.description) for s in SHORTCUT_TABLE]
    return tuple(menu)


# Every command a chat may type, in menu order: `/start`, the table, and the section shortcuts
# right after `/pr`. Telegram registers and lists exactly these.
COMMAND_MENU = _menu()

# How a platform's help lines start a command: Slack's commands are words after `/pr`.
COMMAND_PREFIXES = {Platform.SLACK: "/pr "}
DEFAULT_COMMAND_PREFIX = "/"


def command_prefix(platform: Platform) -> str:
    return COMMAND_PREFIXES.get(platform, DEFAULT_COMMAND_PREFIX)


SECTION_WORDS: dict[str, Section] = {
    **{s.value: s for s in Section},
    "risk": Section.RISKS, "风险": Section.RISKS, "risk_flags": Section.RISKS,
    "file": Section.FILES, "文件": Section.FILES, "touch": Section.FILES, "touched": Section.FILES,
    "关键文件": Section.FILES,
    "relate": Section.RELATED, "关联": Section.RELATED, "相关": Section.RELATED,
    "why": Section.MOTIVATION, "动机": Section.MOTIVATION,
    "implementation": Section.IMPL, "how": Section.IMPL, "实现": Section.IMPL,
    "comment": Section.COMMENTS, "discussion": Section.COMMENTS, "评论": Section.COMMENTS,
    "全文": Section.FULL, "完整": Section.FULL, "all": Section.FULL,
    "摘要": Section.SUMMARY, "概要": Section.SUMMARY,
}  # fmt: skip

MAX_ARGS = 50
# `7422`, `#7422`, `verl#7422` (a digest's label), `owner/repo#7422` inside a sentence
_MENTION_REF = re.compile(r"(?:[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?)?#\d+|(?<![\w/])\d{1,10}(?!\w)")
_WORD = re.compile(r"[a-z_]+|[\u4e00-\u9fff]+")


class UsageError(ValueError):
    """Input the command cannot use. `key` and `params` name a notice in the labels table."""

    def __init__(self, key: str, **params: str) -> None:
        super().__init__(key)
        self.key = key
        self.params = params


def _split(text: str) -> list[str]:
    try:
        args = shlex.split(text)
    except ValueError:  # an unbalanced quote: fall back to plain words
        args = text.split()
    if len(args) > MAX_ARGS:
        raise UsageError("too_many_args", limit=str(MAX_ARGS))
    return args


def section_of(word: str) -> Section:
    """A section by any of its names (`risks`, `risk`, `风险`): the chat's and the CLI's list."""
    section = SECTION_WORDS.get(word.lower())
    if section is None:
        raise UsageError("unknown_section", section=word[:40])
    return section


def _pr(args: list[str], section: Section | None = None) -> ShowReport:
    public = "public" in args
    args = [a for a in args if a != "public"]
    if not args:
        raise UsageError("usage")
    try:
        ref = parse_ref(args[0])
    except BadRefError:
        raise UsageError("bad_ref", ref=args[0][:80]) from None
    if section is None and len(args) > 1:
        section = section_of(args[1])
    return ShowReport(ref, section or Section.SUMMARY, public)


def _unsubscribe(args: list[str]) -> Unsubscribe:
    """`unsubscribe 2`, `unsubscribe 1 3`, `unsubscribe all`: by the numbers `subscriptions`
    shows."""
    if [a.lower() for a in args] == ["all"]:
        return Unsubscribe(everything=True)
    if not args or not all(a.isdigit() and 0 < int(a) < 2**31 for a in args):
        raise UsageError("usage_unsubscribe")
    return Unsubscribe(numbers=tuple(dict.fromkeys(int(a) for a in args)))


def _timezone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError("bad_timezone", tz=name[:64]) from None
    return name


def _schedule(args: list[str]) -> SetSchedule:
    if not args:
        raise UsageError("usage_schedule")
    cron = clock_cron(args[0])
    if cron is not None:
        rest = args[1:]
        if rest and is_days(rest[0]):
            cron = clock_cron(args[0], rest[0]) or cron
            rest = rest[1:]
    elif len(args[0].split()) == 5:  # a quoted cron
        cron, rest = args[0], args[1:]
    elif len(args) >= 5:
        cron, rest = " ".join(args[:5]), args[5:]
    else:
        raise UsageError("usage_schedule")
    if len(rest) > 1:
        raise UsageError("usage_schedule")
    tz = _timezone(rest[0]) if rest else None
    return SetSchedule(cron, tz)


def _typed_query(text: str) -> TypedQuery:
    """A query read whole (quotes and parentheses are its own syntax); an error in it is kept
    to be answered with its line, not raised."""
    typed = " ".join(text.split())
    try:
        return TypedQuery(typed, parse_query(typed))
    except QueryError as error:
        return TypedQuery(typed, None, str(error), error)


def _find(text: str) -> Find:
    """`find QUERY`."""
    if not text.strip():
        raise UsageError("usage_find")
    return Find(_typed_query(text))


_AT: Final = re.compile(r"\s+at\s+", re.IGNORECASE)


def _subscribe(text: str, replay: bool) -> Subscribe | TrySubscribe | OpenPicker:
    """`subscribe [test] QUERY [at CADENCE]`: the query read whole, like find's; the cadence is
    what follows the last ` at ` (or the pickers' wording that holds an `at`: `_cadence_cut`).
    With nothing after it, `subscribe` asks for a picker (Slack's modal, Telegram's keyboard)."""
    typed = " ".join(text.split())
    parts = _AT.split(typed)
    cut = _cadence_cut(parts)
    query_text, cadence = " at ".join(parts[:cut]), " at ".join(parts[cut:])
    if not query_text:
        if replay:
            raise UsageError("usage_subscribe_test")
        if cadence:
            raise UsageError("usage_subscribe")
        return OpenPicker()
    typed_query = _typed_query(query_text)
    if replay:
        return TrySubscribe(typed_query, cadence)
    return Subscribe(typed_query, cadence)


def _cadence_cut(parts: list[str]) -> int:
    """Where the cadence starts in `QUERY at CADENCE` split at each ` at `: the last part, or an
    earlier one when the pickers' wording typed back holds an `at` itself (`rollout at every day
    at 09:00`, `... at Fridays at 17:00`), so it is read whole; past the end with no ` at `."""
    for cut in range(1, len(parts) - 1):
        if canonical_cadence(" at ".join(parts[cut:])) is not None:
            return cut
    return max(len(parts) - 1, 1)


def _verb(name: str) -> Verb | None:
    if name in VERB_ALIASES:
        return VERB_ALIASES[name]
    try:
        return Verb(name)
    except ValueError:
        return None


def parse(verb_text: str, text: str = "") -> Request:
    """A command by name (`risks`, `subscribe`, `pr`...) and its argument text."""
    name = verb_text.lower().lstrip("/")
    verb = _verb(name)
    if verb is Verb.FIND:
        return _find(text)
    args = _split(text)
    if name in SECTION_SHORTCUTS:
        return _pr(args, SECTION_SHORTCUTS[name])
    if verb is None:
        raise UsageError("unknown_command", command=verb_text[:40])
    match verb:
        case Verb.PR:
            return parse_pr_text(text)
        case Verb.SUBSCRIBE if args and args[0].lower() == "test":
            return _subscribe(text.strip()[len(args[0]) :], replay=True)
        case Verb.SUBSCRIBE:
            return _subscribe(text, replay=False)
        case Verb.UNSUBSCRIBE:
            return _unsubscribe(args)
        case Verb.SCHEDULE:
            return _schedule(args)
        case _:
            return Ask(verb, public="public" in args)


def parse_pr_text(text: str) -> Request:
    """Slack's `/pr` text: a PR reference, or a subcommand (`/pr subscribe rollout`)."""
    args = _split(text)
    if not args:
        return Ask(Verb.HELP)
    head = args[0].lower()
    if head in SECTION_SHORTCUTS or _verb(head) not in (None, Verb.PR):
        return parse(head, text.strip()[len(args[0]) :])
    return _pr(args)


def parse_mention(text: str) -> Request | None:
    """Natural language after an @mention: "show risks for #7422", "#7422 的风险",
    "what files did 7422 touch", "related to 7422". None when no PR is named."""
    cleaned = re.sub(r"<@[A-Z0-9]+>", " ", text).strip()
    head, *tail = cleaned.split(maxsplit=1) or [""]
    if _verb(head.lower()) is Verb.FIND:  # "@prdigest find risk:FP8": a query, not a PR
        return _find(tail[0]) if tail else None
    match = _MENTION_REF.search(cleaned)
    if match is None:
        try:
            return parse_pr_text(cleaned) if cleaned else Ask(Verb.HELP)
        except UsageError:
            return None
    try:
        ref = parse_ref(match.group())
    except BadRefError:
        return None
    rest = (cleaned[: match.start()] + " " + cleaned[match.end() :]).lower()
    section = Section.SUMMARY
    for word in _WORD.findall(rest):
        found = SECTION_WORDS.get(word) or next(
            (s for key, s in SECTION_WORDS.items() if not key.isascii() and key in word), None
        )
        if found is not None and word != "all":
            section = found
            break
    return ShowReport(ref, section, public=True)


def opens_picker(parse: Callable[[], Request]) -> bool:
    """Whether the typed command is `subscribe` with nothing after it: the platform opens its
    picker (Slack's modal, Telegram's keyboard) instead of answering in words."""
    try:
        return isinstance(parse(), OpenPicker)
    except UsageError:
        return False


MAX_REF_SHOWN = 80  # of a button value that names no PR, quoted back


def button_request(value: str, section: Section) -> ShowReport:
    """A digest's section button: the PR its value names, at that section."""
    try:
        ref = parse_ref(value)
    except BadRefError:
        raise UsageError("bad_ref", ref=value[:MAX_REF_SHOWN]) from None
    return ShowReport(ref, section)
