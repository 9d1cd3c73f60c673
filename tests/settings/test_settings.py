"""Configuration and environment: validated at start, errors name the key and the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.models import Platform
from bot.settings import BotConfig, ConfigError, Env, load_config


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bot.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        ("channels:\n  - {name: a, platform: slack, target: C1, tagz: [x]}\n", "channels.a.tagz"),
        ("timezone: Mars/Base\n", "timezone: unknown time zone 'Mars/Base'"),
        ("channels:\n  - {name: a, platform: fax, target: C1}\n", "channels.a.platform"),
        (
            "channels:\n  - {name: a, platform: slack, target: C1, schedule: '0 9 * *'}\n",
            "needs 5 fields",
        ),
        (
            "channels:\n  - {name: a, platform: slack, target: C1}\n"
            "  - {name: a, platform: slack, target: C2}\n",
            "channels[1].name: 'a' is already channels[0].name (names are unique)",
        ),
        ("sources:\n  - {dir: x, url: 'https://x'}\n", "exactly one of `dir` or `url`"),
        ("- just\n- a list\n", "the top level must be a mapping"),
        ("channels: [\n", "not valid YAML"),
    ],
)
def test_a_bad_config_names_the_key_and_the_reason(
    tmp_path: Path, yaml_text: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, yaml_text))
    assert expected in str(caught.value)


def test_a_missing_config_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "nope.yaml")


def test_no_config_means_the_embedded_default() -> None:
    config = load_config(None)
    assert [c.name for c in config.channels] == ["console"]
    assert str(config.sources[0].dir) == "examples/reports"


def test_environment_defaults_and_secrets() -> None:
    env = Env.from_environ({"SLACK_BOT_TOKEN": "xoxb-1", "BOT_HTTP_PORT": "9000"})
    assert env.database_url == "sqlite:///data/bot.db"
    assert env.http_port == 9000
    assert env.slack_enabled and not env.telegram_enabled
    assert "xoxb-1" not in repr(env)


def test_an_empty_bot_config_forces_the_built_in_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "bot.yaml").write_text("timezone: UTC\n")
    assert Env.from_environ({}).config_path == Path("config/bot.yaml")
    assert Env.from_environ({"BOT_CONFIG": ""}).config_path is None


def test_a_bad_port_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="BOT_HTTP_PORT"):
        Env.from_environ({"BOT_HTTP_PORT": "eighty"})


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        ("calendar: {holidays: {country: XX}}\n",
         "calendar.holidays.country: unknown country code 'XX'"),
        ("calendar: {holidays: {country: US, subdivision: ZZ}}\n",
         "calendar.holidays.subdivision: US has no subdivision 'ZZ'"),
        ("calendar: {holidays: {}}\n",
         "calendar.holidays: holidays need exactly one of `country` or `ics`"),
        ("calendar: {quiet_hours: '22-08'}\n",
         "calendar.quiet_hours: '22-08' is not a range of times (use HH:MM-HH:MM, 22:00-08:00)"),
        ("calendar: {quiet_hour: '22:00-08:00'}\n",
         "calendar.quiet_hour: unknown key; did you mean 'quiet_hours'?"),
        ("calendar: {workdays: [mon, funday]}\n", "calendar.workdays: unknown day 'funday'"),
        ("calendar: {timezone: Mars/Base}\n", "calendar.timezone: unknown time zone 'Mars/Base'"),
        ("channels:\n  - {name: team, platform: console, target: stdout,"
         " calendar: {holidays: {ics: no-such.ics}}}\n",
         "channels.team.calendar.holidays.ics: cannot read no-such.ics: No such file"),
        ("channels:\n  - {name: a, platform: slack, target: C1, calendar: {workdays: [mon]}}\n"
         "  - {name: b, platform: slack, target: C1, calendar: {workdays: [tue]}}\n",
         "channels[1].calendar: channels[0] posts to the same target with another calendar"),
    ],
)  # fmt: skip
def test_a_bad_calendar_names_the_key_and_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, yaml_text: str, expected: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, yaml_text))
    assert expected in str(caught.value)


def test_a_malformed_ics_file_is_refused_at_load_with_its_line(tmp_path: Path) -> None:
    ics = tmp_path / "holidays.ics"
    ics.write_text("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:2026-10-01\nEND:VEVENT\n")
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, f"calendar: {{holidays: {{ics: '{ics}'}}}}\n"))
    assert f"calendar.holidays.ics: {ics}: line 3: '2026-10-01' is not a date" in str(caught.value)


def test_no_calendar_means_every_moment_is_working_time() -> None:
    calendar = load_config(None).calendars().for_destination(Platform.CONSOLE, "stdout", "UTC")
    assert calendar.always


def test_a_channels_calendar_overrides_the_top_level_key_by_key(tmp_path: Path) -> None:
    config = load_config(
        _write(
            tmp_path,
            "timezone: Asia/Shanghai\n"
            "calendar: {workdays: [mon-fri], quiet_hours: '22:00-08:00', holidays: {country: CN}}\n"
            "channels:\n"
            "  - {name: us, platform: slack, target: C1, timezone: America/Los_Angeles,\n"
            "     calendar: {holidays: {country: US, subdivision: CA}}}\n"
            "  - {name: quiet-free, platform: slack, target: C2, calendar: {quiet_hours: null}}\n",
        )
    )
    book = config.calendars()
    us = book.for_destination(Platform.SLACK, "C1", "America/Los_Angeles")
    assert us.describe() == "mon-fri, quiet 22:00-08:00, holidays US-CA, America/Los_Angeles"
    free = book.for_destination(Platform.SLACK, "C2", "Asia/Shanghai")
    assert free.describe() == "mon-fri, holidays CN, Asia/Shanghai"
    chat = book.for_destination(Platform.TELEGRAM, "-100", "Asia/Shanghai")  # a chat-made one
    assert chat.describe() == "mon-fri, quiet 22:00-08:00, holidays CN, Asia/Shanghai"


def test_channels_sharing_a_target_share_the_calendar_one_of_them_gives(tmp_path: Path) -> None:
    config = load_config(
        _write(
            tmp_path,
            "channels:\n"
            "  - {name: daily, platform: slack, target: C1, calendar: {workdays: [mon-fri]}}\n"
            "  - {name: breaking, platform: slack, target: C1, cadence: now}\n",
        )
    )
    calendar = config.calendars().for_destination(Platform.SLACK, "C1", "UTC")
    assert calendar.describe() == "mon-fri, UTC"


@pytest.mark.parametrize(
    ("written", "schedule", "cadence"),
    [
        ("daily 09:00", "0 9 * * *", "daily 09:00"),
        ("workdays 09:30", "30 9 * * mon-fri", "workdays 09:30"),
        ("weekly fri 17:00", "0 17 * * fri", "weekly fri 17:00"),
        ("now", "now", "now"),
        ("09:00 mon-fri", "0 9 * * mon-fri", "09:00 mon-fri"),
        ("0 9 * * 1-5", "0 9 * * 1-5", "0 9 * * 1-5"),
    ],
)
@pytest.mark.parametrize("key", ["schedule", "cadence"])
def test_schedule_and_cadence_take_the_same_words(
    key: str, written: str, schedule: str, cadence: str
) -> None:
    channel = {"name": "a", "platform": "console", "target": "stdout", key: written}
    [read] = BotConfig.model_validate({"channels": [channel]}).channels
    assert read.schedule == schedule
    assert (read.cadence or read.schedule) in (cadence, schedule)
