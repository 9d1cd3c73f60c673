"""The `reading:` config: durations in days, validated with the key's path, and a channel's
own `unread_days` reaching the planner."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.chat.reading import reading_policy
from bot.settings import BotConfig, ConfigError, load_config


def _load(tmp_path: Path, text: str) -> BotConfig:
    path = tmp_path / "bot.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def test_reading_defaults_to_seven_days_each() -> None:
    reading = BotConfig().reading
    assert (reading.unread_days, reading.snooze_days, reading.mute_days) == (7, 7, 7)


def test_a_channels_unread_days_overrides_the_global_one(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        "reading: {unread_days: 5, snooze_days: 2}\n"
        "channels:\n"
        "  - {name: a, platform: slack, target: C1, unread_days: 3}\n"
        "  - {name: b, platform: telegram, target: '-100', locale: en}\n",
    )
    policy = reading_policy(config)
    assert policy.days_at("slack", "C1") == 3
    assert policy.days_at("telegram", "-100") == 5
    assert config.reading.snooze_days == 2


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("reading: {unread_days: 0}\n", "reading.unread_days"),
        ("reading: {unread_days: 31}\n", "reading.unread_days"),
        ("reading: {mute_days: 91}\n", "reading.mute_days"),
        ("reading: {snooze: 3}\n", "reading.snooze"),
        ("channels: [{name: a, platform: slack, target: C1, unread_days: -1}]\n", "unread_days"),
    ],
)
def test_bad_reading_settings_name_the_key(tmp_path: Path, text: str, where: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text)
    assert where in str(caught.value)
