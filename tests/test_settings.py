"""Configuration and environment: validated at start, errors name the key and the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.settings import ConfigError, Env, load_config


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
