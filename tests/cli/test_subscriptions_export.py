"""`prdigest subscriptions export|import|list` (issue 17's config-as-code), as an operator runs
them, on SQLite and PostgreSQL: the subscriptions are made in the chats, through the Answerer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.chat.answers import Answerer, Chat, Notice
from bot.chat.commands import parse
from bot.cli import main
from bot.core.clock import utc_clock
from bot.core.models import Locale, Platform
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate
from bot.core.store.subscriptions import SubscriptionStore
from bot.core.store.subscriptions.changes import Change
from bot.core.store.subscriptions.destination_store import DestinationStore
from bot.settings import BotConfig, load_config

CONFIG = """\
timezone: Europe/Berlin
channels:
  - {name: team, platform: telegram, target: "-100", tags: [rollout]}
  - {name: release, platform: telegram, target: "-300", locked: true}
"""


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> BotConfig:
    """A config channel beside the chats' subscriptions, and a locked one."""
    path = tmp_path / "bot.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    monkeypatch.setenv("BOT_CONFIG", str(path))
    for name in ("SLACK_BOT_TOKEN", "TELEGRAM_BOT_TOKEN", "SLACK_APP_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return load_config(path)


class Cli:
    """`prdigest ...` against one database, run as its own process would: its own loop."""

    def __init__(
        self, url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.url = url
        self.capsys = capsys
        self.monkeypatch = monkeypatch

    async def __call__(self, *argv: str) -> tuple[int, str, str]:
        self.monkeypatch.setenv("BOT_DATABASE_URL", self.url)
        self.capsys.readouterr()
        status = await asyncio.to_thread(main, list(argv))
        out, err = self.capsys.readouterr()
        return status, out, err


def _chat(platform: Platform, chat_id: str, user: str, private: bool = False) -> Chat:
    async def is_admin() -> bool:
        return True

    return Chat(platform, chat_id, user, is_admin, Locale.EN, user_name=user, private=private)


async def make_chat_subscriptions(engine: AsyncEngine, config: BotConfig) -> None:
    """A Telegram group (beside its config channel, with a gap where one was removed), a
    Slack channel and a Slack DM, subscribed as people type it."""
    await SubscriptionStore(engine).sync_config(config)
    answerer = Answerer(ReportStore(engine), DestinationStore(engine), config, clock=utc_clock)
    group = _chat(Platform.TELEGRAM, "-100", "ada")
    channel = _chat(Platform.SLACK, "C0RELEASE", "U0ADA")
    dm = _chat(Platform.SLACK, "D0BOB", "U0BOB", private=True)
    for chat, text in (
        (group, "tag:rollout -tag:ci"),
        (group, "sglang at now"),
        (group, "权重 impact>=medium at weekly friday 17:00"),
        (channel, "tag:breaking at now"),
        (dm, "repo:verl-project/verl must-read at daily 8:30"),
    ):
        answer = await answerer.answer(parse("subscribe", text), chat)
        assert isinstance(answer.reply, Notice) and answer.reply.key == "subscribed", text
    gone = await answerer.answer(parse("unsubscribe", "3"), group)
    assert gone.reply == Notice("unsubscribed", {"items": "3. sglang"})


@pytest.fixture
async def made(store: ReportStore, config: BotConfig) -> AsyncEngine:
    """The test database (SQLite or PostgreSQL) with the chats' subscriptions in it."""
    await make_chat_subscriptions(store.engine, config)
    return store.engine


def _imports(changes: list[Change]) -> list[Change]:
    return [c for c in changes if c.action == "import"]


EXPECTED_EXPORT = """\
# Subscriptions made from chats (prdigest subscriptions export). After editing,
# `prdigest subscriptions import FILE` makes the store's equal to this file.
subscriptions:
- platform: slack
  target: C0RELEASE
  number: 1
  name: tag:breaking
  query: tag:breaking
  max_items: 30
  cadence: now
  timezone: Europe/Berlin
  locale: en
  layout: flat
  verbosity: standard
  owner: null
- platform: slack
  target: D0BOB
  number: 1
  name: repo:verl-project/verl must-read
  query: repo:verl-project/verl must-read
  max_items: 30
  cadence: daily 08:30
  timezone: Europe/Berlin
  locale: en
  layout: flat
  verbosity: standard
  owner: U0BOB
- platform: telegram
  target: '-100'
  number: 2
  name: tag:rollout -tag:ci
  query: tag:rollout -tag:ci
  max_items: 30
  cadence: 0 9 * * mon-fri
  timezone: Europe/Berlin
  locale: en
  layout: flat
  verbosity: standard
  owner: null
- platform: telegram
  target: '-100'
  number: 4
  name: 权重 impact>=medium
  query: 权重 impact>=medium
  max_items: 30
  cadence: weekly fri 17:00
  timezone: Europe/Berlin
  locale: en
  layout: flat
  verbosity: standard
  owner: null
"""


async def test_an_export_imported_into_a_fresh_store_exports_byte_for_byte(
    tmp_path: Path,
    config: BotConfig,
    database_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Made in one store (SQLite), imported into a new one (the test's database), the same."""
    source = create_engine(f"sqlite:///{tmp_path / 'chats.db'}")
    try:
        await migrate(source)
        await make_chat_subscriptions(source, config)
    finally:
        await source.dispose()
    status, exported, _ = await Cli(f"sqlite:///{tmp_path / 'chats.db'}", capsys, monkeypatch)(
        "subscriptions", "export"
    )
    assert (status, exported) == (0, EXPECTED_EXPORT)
    path = tmp_path / "subs.yaml"
    path.write_text(exported, encoding="utf-8")

    fresh = Cli(database_url, capsys, monkeypatch)
    status, out, err = await fresh("subscriptions", "import", str(path))
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        "slack:C0RELEASE: added 1: tag:breaking",
        "slack:D0BOB: added 1: repo:verl-project/verl must-read",
        "telegram:-100: added 2: tag:rollout -tag:ci, 4: 权重 impact>=medium",
        "added 4, updated 0, unchanged 0, removed 0",
    ]
    assert await fresh("subscriptions", "export") == (0, exported, "")

    engine = create_engine(database_url)
    try:
        subs = SubscriptionStore(engine)
        group = await subs.of(Platform.TELEGRAM, "-100")
        assert [(s.number, s.origin, s.schedule) for s in group] == [
            (1, "config", "0 9 * * mon-fri"),
            (2, "chat", "0 9 * * mon-fri"),
            (4, "chat", "0 17 * * fri"),
        ]
        [dm] = await subs.of(Platform.SLACK, "D0BOB")
        assert (dm.owner, dm.schedule, dm.timezone) == ("U0BOB", "30 8 * * *", "Europe/Berlin")
        imports = _imports(await subs.changes(20))
        assert sorted(c.destination for c in imports) == [
            "slack:C0RELEASE",
            "slack:D0BOB",
            "telegram:-100",
        ]
        assert {c.actor for c in imports} == {"prdigest subscriptions import"}
    finally:
        await engine.dispose()


async def test_importing_the_export_of_the_same_store_changes_nothing(
    tmp_path: Path,
    made: AsyncEngine,
    database_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cli = Cli(database_url, capsys, monkeypatch)
    _, exported, _ = await cli("subscriptions", "export")
    path = tmp_path / "subs.yaml"
    path.write_text(exported, encoding="utf-8")
    before = await SubscriptionStore(made).all()
    for flag in ((), ("--replace",)):
        assert await cli("subscriptions", "import", str(path), *flag) == (
            0,
            "added 0, updated 0, unchanged 4, removed 0\n",
            "",
        )
    assert await SubscriptionStore(made).all() == before
    assert _imports(await SubscriptionStore(made).changes(20)) == []


async def test_an_edited_file_updates_adds_and_with_replace_removes(
    tmp_path: Path,
    made: AsyncEngine,
    database_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cli = Cli(database_url, capsys, monkeypatch)
    _, exported, _ = await cli("subscriptions", "export")
    data = yaml.safe_load(exported)
    slack_channel, dm, rollout, weights = data["subscriptions"]
    rollout |= {"cadence": "workdays 9:30", "exclude_tags": ["CI"], "name": "权重 impact>=medium"}
    weights |= {"name": "tag:rollout -tag:ci", "query": "权重 impact>=high"}  # names swapped
    added = {**slack_channel, "number": 7, "name": "fixes", "query": "tag:fix", "owner": None}
    data["subscriptions"] = [rollout, weights, added, dm]  # the Slack channel's first is gone
    path = tmp_path / "subs.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    group_before = {
        s.number: s for s in await SubscriptionStore(made).of(Platform.TELEGRAM, "-100")
    }

    status, out, _ = await cli("subscriptions", "import", str(path))
    assert status == 0
    assert out.splitlines() == [
        "slack:C0RELEASE: added 7: fixes",
        "telegram:-100: updated 2: 权重 impact>=medium, 4: tag:rollout -tag:ci",
        "added 1, updated 2, unchanged 1, removed 0",
    ]
    group = {s.number: s for s in await SubscriptionStore(made).of(Platform.TELEGRAM, "-100")}
    assert (group[2].schedule, group[2].cadence) == ("30 9 * * mon-fri", "workdays 09:30")
    assert group[2].filter.exclude_tags == ("ci",)
    assert group[4].filter.query == "权重 impact>=high"
    assert group[2].watermark == group_before[2].watermark  # nothing already read comes again
    channel = await SubscriptionStore(made).of(Platform.SLACK, "C0RELEASE")
    assert [s.name for s in channel] == ["tag:breaking", "fixes"]  # kept without --replace

    status, out, _ = await cli("subscriptions", "import", "--replace", str(path))
    assert (status, out.splitlines()) == (
        0,
        ["slack:C0RELEASE: removed 1: tag:breaking", "added 0, updated 0, unchanged 4, removed 1"],
    )
    assert [s.name for s in await SubscriptionStore(made).of(Platform.SLACK, "C0RELEASE")] == [
        "fixes"
    ]
    [last, *_] = await SubscriptionStore(made).changes(1)
    assert (last.destination, last.actor, last.action, last.detail) == (
        "slack:C0RELEASE",
        "prdigest subscriptions import",
        "import",
        "removed 1: tag:breaking",
    )


GOOD = {
    "platform": "telegram",
    "target": "-100",
    "number": 9,
    "name": "new",
    "query": "tag:fix",
    "cadence": "daily 09:00",
}


@pytest.mark.parametrize(
    ("bad", "line"),
    [
        (
            {"cadence": "hourly"},
            "subscriptions[1].cadence: 'hourly' is not a cadence (use a cron like "
            "'0 9 * * mon-fri', 'daily 09:00', 'workdays 09:30', 'weekly fri 17:00' or 'now')",
        ),
        (
            {"cadence": "0 9 31 2 *"},
            "subscriptions[1].cadence: cron '0 9 31 2 *' never fires within a year",
        ),
        ({"query": "rsk:fp8"}, "subscriptions[1].query: unknown field 'rsk' at 1"),
        (
            {"target": None},
            "subscriptions[1].target: missing (every entry has platform, target, number, name "
            "and cadence)",
        ),
        ({"number": True}, "subscriptions[1].number: Input should be a valid integer"),
        (
            {"number": 10**30},
            "subscriptions[1].number: Input should be less than or equal to 2147483647",
        ),
        (
            {"number": 2**32},
            "subscriptions[1].number: Input should be less than or equal to 2147483647",
        ),
        (
            {"target": "-1" * 100},
            "subscriptions[1].target: longer than the store holds (128 characters)",
        ),
        ({"name": "n" * 129}, "subscriptions[1].name: String should have at most 128"),
        ({"owner": "U" * 129}, "subscriptions[1].owner: String should have at most 128"),
        (
            {"cadence": "0 9 * * " + ",".join(["mon"] * 40)},
            "subscriptions[1].cadence: String should have at most 128",
        ),
        ({"targets": "-100"}, "subscriptions[1].targets: unknown key (known: platform, "),
        (
            {"target": "-300"},
            "subscriptions[1]: telegram:-300 is locked by config channel 'release' (locked: "
            "true in {config}): change its subscriptions there",
        ),
        (
            {"number": 1},
            "subscriptions[1].number: 1 is taken by telegram:-100's config channel 'team'",
        ),
        (
            {"name": "tag:rollout -tag:ci"},
            "subscriptions[1].name: 'tag:rollout -tag:ci' is already the name of "
            "telegram:-100's subscription 2 (not in the file; --replace removes it)",
        ),
    ],
    ids=[
        "unknown cadence",
        "cadence never fires",
        "bad query",
        "missing target",
        "number not a number",
        "number past any store",
        "number past PostgreSQL's INTEGER",
        "target too long",
        "name too long",
        "owner too long",
        "cadence too long",
        "unknown key",
        "locked destination",
        "number of a config channel",
        "name of a kept subscription",
    ],
)
async def test_a_bad_entry_is_named_and_nothing_is_written(
    tmp_path: Path,
    made: AsyncEngine,
    database_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    bad: dict[str, object],
    line: str,
) -> None:
    entry = {k: v for k, v in {**GOOD, **bad}.items() if v is not None}
    added = {**GOOD, "platform": "slack", "target": "C0NEW"}
    path = tmp_path / "subs.yaml"
    path.write_text(yaml.safe_dump({"subscriptions": [added, entry]}), encoding="utf-8")
    before = await SubscriptionStore(made).all()
    status, out, err = await Cli(database_url, capsys, monkeypatch)(
        "subscriptions", "import", str(path)
    )
    assert (status, out) == (2, "")
    first, second, *_ = err.splitlines()
    assert first == "prdigest subscriptions: nothing was imported:"
    assert second.startswith(f"  {line.format(config=tmp_path / 'bot.yaml')}"), second
    assert await SubscriptionStore(made).all() == before
    assert _imports(await SubscriptionStore(made).changes(20)) == []


async def test_two_entries_with_one_number_are_both_named(
    tmp_path: Path,
    made: AsyncEngine,
    database_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "subs.yaml"
    twice = [GOOD, {**GOOD, "name": "other"}, {**GOOD, "number": 10}]
    path.write_text(yaml.safe_dump({"subscriptions": twice}), encoding="utf-8")
    status, _, err = await Cli(database_url, capsys, monkeypatch)(
        "subscriptions", "import", str(path)
    )
    assert status == 2
    assert err.splitlines()[1:] == [
        "  subscriptions[1].number: 9 is also subscriptions[0].number (telegram:-100)",
        "  subscriptions[2].name: 'new' is also subscriptions[0].name (telegram:-100)",
    ]


@pytest.mark.usefixtures("config")
async def test_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = Cli(f"sqlite:///{tmp_path / 'none.db'}", capsys, monkeypatch)
    status, _, err = await cli("subscriptions", "export")
    assert status == 2 and "no database at" in err
    missing = tmp_path / "missing.yaml"
    status, _, err = await cli("subscriptions", "import", str(missing))
    assert (status, err) == (
        2,
        f"prdigest subscriptions: cannot read {missing}: No such file or directory\n",
    )
    (tmp_path / "list.yaml").write_text("- platform: slack\n", encoding="utf-8")
    status, _, err = await cli("subscriptions", "import", str(tmp_path / "list.yaml"))
    assert (status, err) == (
        2,
        "prdigest subscriptions: the file must hold one key, `subscriptions:`, "
        "a list of subscriptions\n",
    )
    assert not (tmp_path / "none.db").exists()  # a refused file opens no database
    (tmp_path / "empty.yaml").write_text("subscriptions: []\n", encoding="utf-8")
    assert await cli("subscriptions", "import", str(tmp_path / "empty.yaml")) == (
        0,
        "added 0, updated 0, unchanged 0, removed 0\n",
        "",
    )
    with pytest.raises(SystemExit) as usage:
        main(["subscriptions"])
    assert usage.value.code == 2


@pytest.mark.usefixtures("config")
@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[" * 10_000, "not valid YAML: nested too deep"),
        (
            "subscriptions: [\n  {platform: slack\n",
            "not valid YAML: expected ',' or '}', but got '<stream end>' (line 3, column 1)",
        ),
    ],
    ids=["nested 10,000 deep", "unclosed flow mapping"],
)
async def test_a_file_that_is_not_yaml_is_one_line_and_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    said: str,
) -> None:
    path = tmp_path / "subs.yaml"
    path.write_text(text, encoding="utf-8")
    cli = Cli(f"sqlite:///{tmp_path / 'none.db'}", capsys, monkeypatch)
    assert await cli("subscriptions", "import", str(path)) == (
        2,
        "",
        f"prdigest subscriptions: {path}: {said}\n",
    )
    assert not (tmp_path / "none.db").exists()


async def test_list_prints_what_the_chat_answers(
    made: AsyncEngine,
    database_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    status, out, _ = await Cli(database_url, capsys, monkeypatch)("subscriptions", "list")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "slack:C0RELEASE"
    assert lines[1].startswith("  1. tag:breaking · now · next now · last none yet · the chat")
    at = lines.index("telegram:-100")  # speaks its first subscription's language: the config's
    assert lines[at + 1].startswith("  1. tag:rollout · 0 9 * * mon-fri · 下一次 ")
    assert lines[at + 1].endswith(" · 配置 team · flat · standard")
    assert lines[at + 3].startswith("  4. 权重 impact>=medium · weekly fri 17:00 · 下一次 ")
    assert "telegram:-300" in lines and "personal (U0BOB)" in out
