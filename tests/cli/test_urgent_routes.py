"""Urgent routes on the command line: `check-config` says what a channel's `urgent:` and
`holidays:` switches drop of its destination's calendar, and `cadence test --channel` lists an
urgent channel's fires on its own calendar (quiet hours ignored, holidays kept)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.cli import main
from bot.settings import ENV_VARS
from tests.kits.wall_clock import set_wall_clock

CONFIG = (
    "timezone: UTC\n"
    "calendar: {quiet_hours: '22:00-08:00', holidays: {country: US}}\n"
    "channels:\n"
    "  - {name: rl-breaking, platform: console, target: rl, cadence: now, urgent: true}\n"
    "  - {name: rl-nightly, platform: console, target: rl, cadence: '0 23 * * *', urgent: true}\n"
    "  - {name: rl-daily, platform: console, target: rl, cadence: 'daily 23:00'}\n"
    "  - {name: rl-always, platform: console, target: rl, cadence: '0 23 * * *',\n"
    "     urgent: true, holidays: false}\n"
)


@pytest.fixture(autouse=True)
def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_VARS.values():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BOT_DATABASE_URL", f"sqlite:///{tmp_path / 'bot.db'}")
    path = tmp_path / "bot.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    monkeypatch.setenv("BOT_CONFIG", str(path))


def _channel_block(lines: list[str], name: str) -> list[str]:
    """The channel's line and the indented lines under it."""
    start = next(i for i, line in enumerate(lines) if line.startswith(f"channel:   {name} "))
    end = next(
        (i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), len(lines)
    )
    return lines[start:end]


def test_check_config_shows_what_each_switch_drops(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    set_wall_clock(monkeypatch, datetime(2026, 12, 24, 12, tzinfo=UTC))
    assert main(["check-config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    breaking = _channel_block(lines, "rl-breaking")
    assert breaking[0].endswith(
        "'now' UTC, posts each matching PR as it arrives, held outside working time"
    )
    assert "  calendar: every day, quiet 22:00-08:00, holidays US, UTC" in breaking
    assert "  route:    urgent (ignores quiet hours 22:00-08:00; holidays US apply)" in breaking
    nightly = _channel_block(lines, "rl-nightly")
    assert nightly[0].endswith(  # Christmas Day's 23:00 is held by the holiday, not quiet hours
        "'0 23 * * *' UTC, next 2026-12-24T23:00:00+00:00"
    )
    daily = _channel_block(lines, "rl-daily")
    assert not any(line.startswith("  route:") for line in daily)
    assert daily[0].endswith(  # every 23:00 falls in its quiet hours
        "'daily 23:00' UTC, warning: never fires on working time within a year (see its calendar)"
    )
    always = _channel_block(lines, "rl-always")
    assert (
        "  route:    urgent, holidays: false (ignores quiet hours 22:00-08:00 and holidays US)"
        in always
    )
    assert lines[-1] == "ok"


def test_cadence_test_lists_an_urgent_channels_fires_inside_quiet_hours(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["--from", "2026-12-24T12:00Z", "--count", "3", "--format", "json"]
    assert main(["cadence", "test", "--channel", "rl-nightly", *args]) == 0
    fires = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [fire["at"] for fire in fires] == [
        "2026-12-24T23:00:00+00:00",
        "2026-12-26T23:00:00+00:00",  # Christmas Day holds it: holidays apply
        "2026-12-27T23:00:00+00:00",
    ]
    assert fires[1]["note"] == "after the 2026-12-25 holiday: Christmas Day"
    assert main(["cadence", "test", "--channel", "rl-always", *args]) == 0
    fires = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [fire["at"][:10] for fire in fires] == ["2026-12-24", "2026-12-25", "2026-12-26"]
    assert main(["cadence", "test", "--channel", "rl-daily", *args]) == 0
    assert capsys.readouterr().out == "", "not urgent: every 23:00 is inside its quiet hours"


def test_cadence_test_text_names_the_route_under_the_calendar(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["--from", "2026-12-24T12:00Z", "--count", "1"]
    assert main(["cadence", "test", "--channel", "rl-nightly", *args]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "cadence:  0 23 * * *",
        "zone:     UTC",
        "calendar: every day, quiet 22:00-08:00, holidays US, UTC",
        "route:    urgent (ignores quiet hours 22:00-08:00; holidays US apply)",
        "  2026-12-24T23:00:00+00:00  Thu 2026-12-24 23:00 UTC",
    ]
    assert main(["cadence", "test", "--channel", "rl-breaking", *args]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [
        "route:    urgent (ignores quiet hours 22:00-08:00; holidays US apply)",
        "posts each matching PR as it arrives: no fire times",
    ]
