"""`prdigest subscriptions list|export|import`: the subscriptions chats made, as config-as-code.

`export` prints every chat-made subscription as YAML (the shape is in docs/subscriptions.md);
`import FILE` checks every entry first, each field against what the store's column holds
(`subscriptions[3].cadence: ...`, one line each, exit 2, nothing written), then makes the chat
subscriptions of each destination the file lists equal to its entries
(store/subscriptions/sync.py). Importing an export changes nothing. `list` prints each
destination's subscriptions as the chat's `subscriptions` answers.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Final

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from bot.chat.messages import Chat, Notice
from bot.chat.requests import Ask, Verb
from bot.chat.subscriptions import SubscriptionVerbs
from bot.cli.common import CliError, Command
from bot.core import clock
from bot.core.digest.select import DigestFilter
from bot.core.models import Layout, Locale, Platform, Verbosity
from bot.core.query import QueryError
from bot.core.query import parse as parse_query
from bot.core.store.bounds import max_chars, max_int
from bot.core.store.sql.tables import destinations, subscriptions
from bot.core.store.subscriptions import NOW, Subscription, SubscriptionStore
from bot.core.store.subscriptions.sync import (
    EntryError,
    ImportRefusedError,
    SubscriptionSync,
    Wanted,
)
from bot.core.timing.cadence import CadenceError, parse_cadence
from bot.core.timing.cron import next_fire
from bot.service.context import load, open_context
from bot.settings import BotConfig, Env
from bot.settings.values import ChatId, Repo, Tag, Timezone

ACTOR: Final = "prdigest subscriptions import"
KEY: Final = "subscriptions"
MAX_ITEMS: Final = 500  # as a config channel's max_items
HEADER: Final = (
    "# Subscriptions made from chats (prdigest subscriptions export). After editing,\n"
    "# `prdigest subscriptions import FILE` makes the store's equal to this file.\n"
)
REQUIRED: Final = "every entry has platform, target, number, name and cadence"
# What the store's columns hold (PostgreSQL's bounds, so a file SQLite took loads there too).
NUMBER_MAX: Final = max_int(subscriptions.c.number)
TARGET_MAX: Final = max_chars(destinations.c.target)
NAME_MAX: Final = max_chars(subscriptions.c.name)
OWNER_MAX: Final = max_chars(subscriptions.c.owner)
TIMEZONE_MAX: Final = max_chars(subscriptions.c.timezone)
CADENCE_MAX: Final = max_chars(subscriptions.c.cadence)
SCHEDULE_MAX: Final = max_chars(subscriptions.c.schedule)


def _query(text: str) -> str:
    """A query as the chat's `subscribe` takes it; "" for none (tags/repos alone)."""
    text = text.strip()
    if text:
        try:
            parse_query(text)
        except QueryError as exc:
            raise ValueError(str(exc).removeprefix("query: ")) from None
    return text


def _cadence(text: str) -> str:
    """The cadence as it is written back: `daily 9:00` -> `daily 09:00`."""
    return _read_cadence(text)[1]


def _read_cadence(text: str) -> tuple[str, str]:
    """(schedule: a cron or "now", cadence as written back)."""
    try:
        cadence = parse_cadence(text, next_fire=next_fire, now=clock.utc_clock())
    except CadenceError as exc:
        raise ValueError(str(exc).removeprefix("cadence: ")) from None
    schedule = cadence.cron or NOW
    _fits(CADENCE_MAX)(cadence.text)
    _fits(SCHEDULE_MAX)(schedule)
    return schedule, cadence.text


def _fits(cap: int) -> Callable[[str], str]:
    """A check that a text fits a column of `cap` characters (after its own validators)."""

    def check(text: str) -> str:
        if len(text) > cap:
            raise ValueError(f"longer than the store holds ({cap} characters)")
        return text

    return check


class Entry(BaseModel):
    """One subscription in the file; timezone and locale default to the config's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    platform: Platform
    target: Annotated[ChatId, AfterValidator(_fits(TARGET_MAX))]
    number: int = Field(ge=1, le=NUMBER_MAX, strict=True)  # `true` is no number
    name: str = Field(min_length=1, max_length=NAME_MAX)
    query: Annotated[str, AfterValidator(_query)] = ""
    tags: list[Tag] = Field(default_factory=list)
    repos: list[Repo] = Field(default_factory=list)
    exclude_tags: list[Tag] = Field(default_factory=list)
    max_items: int = Field(30, ge=1, le=MAX_ITEMS, strict=True)
    cadence: Annotated[str, Field(max_length=CADENCE_MAX), AfterValidator(_cadence)]
    timezone: Annotated[Timezone, Field(max_length=TIMEZONE_MAX)] | None = None
    locale: Locale | None = None
    layout: Layout = Layout.FLAT
    verbosity: Verbosity = Verbosity.STANDARD
    owner: str | None = Field(None, min_length=1, max_length=OWNER_MAX)

    @model_validator(mode="after")
    def _topics_need_telegram(self) -> Entry:
        if self.layout is Layout.TOPICS and self.platform is not Platform.TELEGRAM:
            raise ValueError("layout: topics are Telegram forum topics; use threaded or flat")
        return self

    def wanted(self, index: int, config: BotConfig) -> Wanted:
        schedule, cadence = _read_cadence(self.cadence)
        flt = DigestFilter(
            repos=tuple(self.repos),
            tags=tuple(self.tags),
            exclude_tags=tuple(self.exclude_tags),
            max_items=self.max_items,
            query=self.query,
        )
        return Wanted(
            index=index,
            platform=self.platform,
            target=self.target,
            number=self.number,
            name=self.name,
            filter=flt,
            schedule=schedule,
            cadence=cadence,
            timezone=self.timezone or config.timezone,
            locale=self.locale or config.locale,
            layout=self.layout,
            verbosity=self.verbosity,
            owner=self.owner,
        )


def entry_of(sub: Subscription) -> dict[str, Any]:
    """A subscription as the file holds it; empty tag and repo lists are left out."""
    flt = sub.filter
    entry: dict[str, Any] = {
        "platform": sub.platform.value,
        "target": sub.target,
        "number": sub.number,
        "name": sub.name,
        "query": flt.query,
    }
    for key, values in (
        ("tags", flt.tags),
        ("repos", flt.repos),
        ("exclude_tags", flt.exclude_tags),
    ):
        if values:
            entry[key] = list(values)
    entry |= {
        "max_items": flt.max_items,
        "cadence": sub.cadence,
        "timezone": sub.timezone,
        "locale": sub.locale.value,
        "layout": sub.layout.value,
        "verbosity": sub.verbosity.value,
        "owner": sub.owner,
    }
    return entry


def dump(subs: list[Subscription]) -> str:
    body = yaml.safe_dump(
        {KEY: [entry_of(s) for s in subs]},
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        width=1000,
    )
    return HEADER + body


def _field(loc: tuple[int | str, ...]) -> str:
    """`tags[1]` for ("tags", 1)."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f"{'.' if out else ''}{part}"
    return out


def _errors(index: int, exc: ValidationError) -> list[EntryError]:
    errors = []
    for error in exc.errors():
        if error["type"] == "missing":
            message = f"missing ({REQUIRED})"
        elif error["type"] == "extra_forbidden":
            message = f"unknown key (known: {', '.join(Entry.model_fields)})"
        else:
            message = str(error["msg"]).removeprefix("Value error, ")
        errors.append(EntryError(index, _field(tuple(error["loc"])), message))
    return errors


def read_entries(data: object, config: BotConfig) -> list[Wanted]:
    """Every entry checked; a CliError listing every bad one (and nothing read) otherwise."""
    if not isinstance(data, dict) or set(data) != {KEY} or not isinstance(data[KEY], list):
        raise CliError(f"the file must hold one key, `{KEY}:`, a list of subscriptions")
    wanted: list[Wanted] = []
    errors: list[EntryError] = []
    for index, item in enumerate(data[KEY]):
        if not isinstance(item, dict):
            errors.append(EntryError(index, "", "not a mapping of keys"))
            continue
        try:
            wanted.append(Entry.model_validate(item).wanted(index, config))
        except ValidationError as exc:
            errors += _errors(index, exc)
    if errors:
        raise _refused(errors)
    return wanted


def _refused(errors: list[EntryError]) -> CliError:
    lines = "\n".join(f"  {error}" for error in errors)
    return CliError(f"nothing was imported:\n{lines}")


def _read_file(path: str) -> object:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise CliError(f"{path}: not UTF-8 text") from None
    try:
        return yaml.safe_load(text)
    except RecursionError:  # PyYAML composes nested collections recursively
        raise CliError(f"{path}: not valid YAML: nested too deep") from None
    except yaml.YAMLError as exc:
        raise CliError(f"{path}: not valid YAML: {_yaml_problem(exc)}") from None


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """PyYAML's error on one line: `expected ',' or ']', but got '<stream end>' (line 3,
    column 1)`."""
    if not isinstance(exc, yaml.MarkedYAMLError) or exc.problem is None:
        return " ".join(str(exc).split())
    mark = exc.problem_mark
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return f"{exc.problem}{where}"


def _config_file(env: Env) -> str:
    return str(env.config_path) if env.config_path else "the config"


async def _import(args: argparse.Namespace) -> int:
    env, config = load()
    wanted = read_entries(_read_file(args.file), config)  # before the database is opened
    async with open_context(env) as ctx:
        store = SubscriptionStore(ctx.engine, clock=clock.utc_clock)
        await store.sync_config(ctx.config)  # the config's own numbers, names and locks
        try:
            result = await SubscriptionSync(store).apply(
                wanted, args.replace, ACTOR, _config_file(ctx.env)
            )
        except ImportRefusedError as exc:
            raise _refused(exc.errors) from None
    for plan in result.plans:
        if plan.changed:
            print(f"{plan.label}: {plan.detail()}")
    print(result.summary())
    return 0


async def _export(_args: argparse.Namespace) -> int:
    async with open_context(create=False) as ctx:
        subs = await SubscriptionSync(SubscriptionStore(ctx.engine)).chat_subscriptions()
    sys.stdout.write(dump(subs))
    return 0


async def _nobody_is_admin() -> bool:
    return False


async def _list(_args: argparse.Namespace) -> int:
    async with open_context(create=False) as ctx:
        store = SubscriptionStore(ctx.engine, clock=clock.utc_clock)
        await store.sync_config(ctx.config)
        verbs = SubscriptionVerbs(store, ctx.config, clock.utc_clock, notes=True)
        firsts: dict[tuple[str, str], Subscription] = {}
        for sub in await store.all():
            firsts.setdefault((sub.platform.value, sub.target), sub)
        if not firsts:
            print("no subscriptions: add channels to the config or subscribe from a chat")
        for key in sorted(firsts):
            first = firsts[key]  # the chat speaks its first subscription's language
            chat = Chat(first.platform, first.target, "", _nobody_is_admin, first.locale)
            answer = await verbs.list(Ask(Verb.SUBSCRIPTIONS), chat)
            assert isinstance(answer.reply, Notice)
            print(f"{first.platform.value}:{first.target}")
            lines = answer.reply.params["items"].splitlines()
            for line, sub in zip(lines, await verbs.mine(chat), strict=False):
                print(f"  {line} · {sub.layout} · {sub.verbosity}")
    return 0


def _configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listed = actions.add_parser("list", help="every destination's subscriptions, numbered")
    listed.set_defaults(run=_list)
    export = actions.add_parser("export", help="the chat-made subscriptions as YAML on stdout")
    export.set_defaults(run=_export)
    imported = actions.add_parser(
        "import", help="make the chat subscriptions of the destinations FILE lists equal to it"
    )
    imported.add_argument("file", metavar="FILE", help="an export (edited); - reads stdin")
    imported.add_argument(
        "--replace",
        action="store_true",
        help="also remove chat subscriptions of the listed destinations that FILE lacks",
    )
    imported.set_defaults(run=_import)


async def _handle(args: argparse.Namespace) -> int:
    status: int = await args.run(args)
    return status


COMMAND = Command(
    "subscriptions",
    "chat-made subscriptions as config-as-code: subscriptions list|export|import FILE",
    _configure,
    _handle,
)
