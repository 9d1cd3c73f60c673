"""`prdigest cadence test`: a cadence's fire times, text or one JSON object per fire, each with
a note when a holiday, quiet hours or a DST change moved it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main

NY = ["--tz", "America/New_York"]


def listed(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, Any]]:
    assert main(["cadence", "test", *args, "--format", "json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_json_gives_one_object_per_fire_with_the_real_instant_and_a_dst_note(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fires = listed(capsys, "30 2 * * *", *NY, "--from", "2026-03-07T12:00", "--count", "2")
    assert [set(fire) for fire in fires] == [{"at", "local", "note"}] * 2
    first, second = fires
    assert first["at"] == "2026-03-08T03:00:00-04:00"  # not the 02:30 that does not exist
    assert first["local"] == "Sun 2026-03-08 03:00 EDT"
    assert first["note"].startswith("DST: 2026-03-08 skips 02:00-03:00 (EST → EDT)")
    assert second == {
        "at": "2026-03-09T02:30:00-04:00",
        "local": "Mon 2026-03-09 02:30 EDT",
        "note": "",
    }


def test_the_repeated_hour_is_noted_for_fixed_times_and_intervals(
    capsys: pytest.CaptureFixture[str],
) -> None:
    [once] = listed(capsys, "30 1 * * *", *NY, "--from", "2026-11-01T00:00", "--count", "1")
    assert "comes twice on 2026-11-01 (clocks go back); a fixed time fires once" in once["note"]
    fires = listed(capsys, "*/30 * * * *", *NY, "--from", "2026-11-01T01:00", "--count", "5")
    assert [f["at"][11:] for f in fires] == [
        "01:00:00-04:00",
        "01:30:00-04:00",
        "01:00:00-05:00",
        "01:30:00-05:00",
        "02:00:00-05:00",
    ]
    assert fires[2]["note"] == "DST: the second pass of the repeated hour (EST)"


def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "bot.yaml"
    path.write_text(
        "timezone: Asia/Shanghai\n"
        "calendar: {holidays: {country: CN}, quiet_hours: '22:00-08:00'}\n"
        "channels:\n"
        "  - {name: team, platform: console, target: a, cadence: 'workdays 09:30'}\n"
        "  - {name: hourly, platform: console, target: b, cadence: '0 * * * *'}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("BOT_CONFIG", str(path))


def test_a_channel_brings_its_cadence_zone_and_calendar(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config(tmp_path, monkeypatch)
    team = listed(capsys, "--channel", "team", "--from", "2026-09-30T12:00", "--count", "3")
    assert [f["at"] for f in team] == [
        "2026-10-08T09:30:00+08:00",
        "2026-10-09T09:30:00+08:00",
        "2026-10-10T09:30:00+08:00",  # China's make-up working Saturday
    ]
    assert team[0]["note"].startswith("after the holidays 2026-10-01 to 2026-10-07: National Day")
    hourly = listed(capsys, "--channel", "hourly", "--from", "2026-09-29T21:30", "--count", "1")
    assert hourly == [
        {
            "at": "2026-09-30T08:00:00+08:00",
            "local": "Wed 2026-09-30 08:00 CST",
            "note": "inside quiet hours 22:00-08:00 from 22:00, held to 2026-09-30 08:00",
        }
    ]


def test_text_lists_the_fires_under_the_cadence_and_its_zone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        main(["cadence", "test", "daily 09:00", "--from", "2026-03-01T00:00Z", "--count", "2"]) == 0
    )
    assert capsys.readouterr().out.splitlines() == [
        "cadence:  daily 09:00  (cron 0 9 * * *)",
        "zone:     UTC",
        "  2026-03-01T09:00:00+00:00  Sun 2026-03-01 09:00 UTC",
        "  2026-03-02T09:00:00+00:00  Mon 2026-03-02 09:00 UTC",
    ]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["0 9 * * ?"], "'?' is not crontab; write '*' in the day of week"),
        (["0 9 30 2 *"], "never fires within a year"),
        (["daily 09:00", "--tz", "Mars/Base"], "unknown time zone 'Mars/Base'"),
        (["daily 09:00", "--from", "soon"], "--from 'soon' is not an ISO time"),
        (["daily 09:00", "--count", "0"], "--count 0 is out of range"),
        ([], "give a cadence"),
    ],
)
def test_a_bad_request_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], args: list[str], error: str
) -> None:
    assert main(["cadence", "test", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("prdigest cadence: ") and error in err and len(err.splitlines()) == 1


def test_a_timed_calendar_event_is_named_in_the_note(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ics = tmp_path / "team.ics"
    ics.write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\n"
        "BEGIN:VEVENT\r\nUID:offsite\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:Team offsite\r\n"
        "DTSTART;TZID=Asia/Shanghai:20260930T090000\r\n"
        "DTEND;TZID=Asia/Shanghai:20260930T113000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        encoding="utf-8",
    )
    path = tmp_path / "bot.yaml"
    path.write_text(
        "timezone: Asia/Shanghai\n"
        f"calendar: {{holidays: {{ics: {ics}}}}}\n"
        "channels:\n"
        "  - {name: team, platform: console, target: a, cadence: 'daily 09:30'}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("BOT_CONFIG", str(path))
    team = listed(capsys, "--channel", "team", "--from", "2026-09-30T08:00", "--count", "1")
    assert team == [
        {
            "at": "2026-10-01T09:30:00+08:00",  # the next fire on working time
            "local": "Thu 2026-10-01 09:30 CST",
            "note": "inside the event 'Team offsite' from 09:30, held to 2026-10-01 09:30",
        }
    ]
