"""The CLI speaks like the chat (issue 15): --version, optional titles in `tags test`, a
readable dry run, "nothing new" in times, chat subscriptions in `status`, and a restart that
says when the next digest comes instead of staying silent."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.digest.select import DigestFilter
from bot.core.models import Locale, Platform
from bot.core.reports.parse.parser import parse_file
from bot.core.store.subscriptions import SubscriptionStore
from bot.service.app import Service
from bot.service.context import open_context
from tests.kits.delivery import save_chat
from tests.kits.paths import ROOT, SEED
from tests.kits.wall_clock import set_wall_clock

REPORTS = ROOT / "examples" / "reports"
AT_NINE = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)


def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, channels: str) -> None:
    path = tmp_path / "bot.yaml"
    path.write_text(f"timezone: UTC\nchannels:\n{channels}", encoding="utf-8")
    monkeypatch.setenv("BOT_CONFIG", str(path))
    monkeypatch.setenv("BOT_DATABASE_URL", f"sqlite:///{tmp_path / 'bot.db'}")
    for name in ("SLACK_BOT_TOKEN", "TELEGRAM_BOT_TOKEN", "SLACK_APP_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def _console(tmp_path: Path, tags: str = "[rollout]") -> str:
    out = tmp_path / "out.txt"
    return (
        f"  - {{name: team, platform: console, target: '{out}', locale: en, tags: {tags},"
        " schedule: '0 9 * * *'}\n"
    )


def test_version_comes_from_the_package(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"prdigest {version('prdigest')}\n"


def test_tags_test_shows_titles_as_optional(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "tags test [TITLE ...]" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["tags", "--help"])
    help_text = capsys.readouterr().out
    assert help_text.startswith("usage: prdigest tags [-h] [--path PATH] {test} [TITLE ...]\n")
    assert "tags test [TITLE ...] (none: read stdin)" in help_text


def test_a_dry_run_is_readable_text_unless_a_format_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    slack = "  - {name: team, platform: slack, target: C0TEST1, locale: en}\n"
    _config(tmp_path, monkeypatch, slack)
    assert main(["ingest", "-q", str(REPORTS)]) == 0
    capsys.readouterr()
    assert main(["digest", "team", "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert main(["digest", "team", "--dry-run", "--format", "text"]) == 0
    assert text == capsys.readouterr().out
    assert text.startswith("PR digest · tag view · ") and "#7422" in text
    assert main(["digest", "team", "--dry-run", "--format", "slack"]) == 0
    assert all("blocks" in json.loads(line) for line in capsys.readouterr().out.splitlines())


def test_nothing_new_is_said_with_the_time_of_the_last_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(tmp_path, monkeypatch, _console(tmp_path))
    assert main(["ingest", "-q", str(REPORTS)]) == 0
    wall_clock = set_wall_clock(monkeypatch, AT_NINE)
    assert main(["digest", "team"]) == 0
    capsys.readouterr()
    assert main(["digest", "team", "--dry-run"]) == 0
    said = "nothing new for team since the last digest at 2026-12-03 09:00 UTC"
    assert capsys.readouterr().err == said + "\n"
    wall_clock.advance(3600)
    assert main(["digest", "team"]) == 0
    assert capsys.readouterr().out == said + "; nothing sent\n"


def test_a_channel_that_never_had_a_digest_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(tmp_path, monkeypatch, _console(tmp_path, tags="[no-such-tag]"))
    assert main(["ingest", "-q", str(REPORTS)]) == 0
    capsys.readouterr()
    assert main(["digest", "team", "--dry-run"]) == 0
    assert capsys.readouterr().err == (
        "nothing for team yet: no stored report matches it and no digest was sent\n"
    )


def test_status_lists_chat_subscriptions_and_the_last_changes_from_chats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(tmp_path, monkeypatch, _console(tmp_path))

    async def subscribe() -> None:
        async with open_context() as ctx:
            kept = DigestFilter(tags=("rollout", "fix"), exclude_tags=("ci",))
            await save_chat(
                ctx.engine,
                Platform.TELEGRAM,
                "-1001",
                kept,
                timezone="Asia/Shanghai",
                locale=Locale.ZH,
            )
            gone = await save_chat(ctx.engine, Platform.SLACK, "C0GONE", DigestFilter(query="x"))
            await SubscriptionStore(ctx.engine).remove(gone.destination_id, None, "ada")

    asyncio.run(subscribe())
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert (
        "rollout fix              telegram:-1001  active\n"
        "    chat subscription 1, query '(tag:rollout OR tag:fix) -tag:ci'; "
        "schedule '0 9 * * mon-fri' "
        "Asia/Shanghai\n"
    ) in out
    listed, changes_part = out.split("last changes from chats:\n")
    assert "slack:C0GONE" not in listed  # no subscription left: nothing to list
    assert "team                     console:" in out
    assert "    config channel, query 'tag:rollout'; schedule '0 9 * * *' UTC\n" in out
    assert "DEACTIVATED" not in out and "reactivate" not in out
    changes = changes_part.splitlines()
    assert [line.split("  ", 3)[-1] for line in changes] == [
        "ada: unsubscribe 1: x",
        "test: subscribe 1: x",
        "test: subscribe 1: rollout fix",
    ]
    assert main(["status", "--format", "json"]) == 0
    states = {s["destination"]: s for s in json.loads(capsys.readouterr().out)}
    assert states["rollout fix"]["tags"] == ["rollout", "fix"]
    assert states["rollout fix"]["number"] == 1 and states["rollout fix"]["owner"] is None


def test_a_restart_with_nothing_new_says_when_the_next_digest_comes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config(tmp_path, monkeypatch, _console(tmp_path))
    out = tmp_path / "out.txt"

    async def scenario() -> list[str]:
        async with open_context() as ctx:
            await ctx.reports.upsert(parse_file(SEED).report, source="test")
            first = Service(ctx, clock=lambda: AT_NINE.replace(minute=5))
            await first.subscriptions.sync_config(ctx.config)
            await first.ticker.tick()  # the 09:00 digest is planned: nothing left to catch up
            notes = []
            for _ in range(2):  # a restart, then one more after a new report came in
                out.unlink(missing_ok=True)
                later = Service(ctx, clock=lambda: AT_NINE.replace(hour=11))
                await later.announce_schedules()
                notes.append(out.read_text(encoding="utf-8"))
                other = parse_file(SEED).report.model_copy(update={"number": 7423})
                await ctx.reports.upsert(other, source="test")
            return notes

    quiet, waiting = asyncio.run(scenario())
    assert (
        quiet == "team: nothing new since 2026-12-03 09:00 UTC; next digest 2026-12-04 09:00 UTC\n"
    )
    assert waiting == (
        "team: 1 new report(s) waiting since 2026-12-03 09:00 UTC; "
        "next digest 2026-12-04 09:00 UTC\n"
    )
