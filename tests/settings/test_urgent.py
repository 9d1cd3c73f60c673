"""A channel's `urgent:` and `holidays:` switches: true or false only, each refusal naming the
key and what it means, and the calendar each channel keeps built from them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.core.models import Platform
from bot.settings import BotConfig, ConfigError, load_config

HEAD = "timezone: UTC\ncalendar: {quiet_hours: '22:00-08:00', holidays: {country: US}}\nchannels:\n"


def _errors(tmp_path: Path, channel: str) -> list[str]:
    path = tmp_path / "bot.yaml"
    path.write_text(
        HEAD + f"  - {{name: rl-breaking, platform: console, target: rl, {channel}}}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return str(caught.value).splitlines()[1:]


@pytest.mark.parametrize(
    ("channel", "error"),
    [
        (
            "urgent: 'soon'",
            "  channels.rl-breaking.urgent: 'soon' is not true or false (urgent: true lets this"
            " channel's digests through its destination's quiet hours; its holidays still hold"
            " them)",
        ),
        (
            "urgent: 1",
            "  channels.rl-breaking.urgent: 1 is not true or false (urgent: true lets this"
            " channel's digests through its destination's quiet hours; its holidays still hold"
            " them)",
        ),
        (
            "holidays: {country: CN}",
            "  channels.rl-breaking.holidays: a channel's `holidays:` is true or false (false:"
            " its destination's holidays do not hold this channel); the holidays themselves go"
            " under `calendar:` (calendar: {holidays: {country: CN}})",
        ),
        (
            "holidays: 'no'",
            "  channels.rl-breaking.holidays: 'no' is not true or false (false: its"
            " destination's holidays do not hold this channel)",
        ),
    ],
)
def test_a_switch_that_is_not_true_or_false_is_refused_with_its_meaning(
    tmp_path: Path, channel: str, error: str
) -> None:
    assert _errors(tmp_path, channel) == [error]


def test_the_switches_default_to_the_destinations_whole_calendar() -> None:
    config = BotConfig.model_validate(
        {"channels": [{"name": "a", "platform": "console", "target": "x"}]}
    )
    [spec] = config.channel_specs()
    assert (config.channels[0].urgent, config.channels[0].holidays) == (False, True)
    assert (spec.urgent, spec.holidays) == (False, True)


def test_yaml_booleans_are_read_and_reach_the_channel_spec(tmp_path: Path) -> None:
    path = tmp_path / "bot.yaml"
    path.write_text(
        HEAD
        + "  - {name: rl-breaking, platform: console, target: rl, cadence: now, urgent: true,\n"
        "     holidays: false}\n"
        "  - {name: rl-daily, platform: console, target: rl, cadence: 'daily 09:00'}\n",
        encoding="utf-8",
    )
    config = load_config(path)
    breaking, daily = config.channel_specs()
    assert (breaking.urgent, breaking.holidays) == (True, False)
    assert (daily.urgent, daily.holidays) == (False, True)


def test_each_switch_drops_its_part_of_the_destinations_calendar_only() -> None:
    config = BotConfig.model_validate(
        {
            "timezone": "UTC",
            "calendar": {"quiet_hours": "22:00-08:00", "holidays": {"country": "US"}},
        }
    )
    book = config.calendars()
    whole = book.for_destination(Platform.CONSOLE, "rl", "UTC")
    urgent = book.for_destination(Platform.CONSOLE, "rl", "UTC", urgent=True)
    free = book.for_destination(Platform.CONSOLE, "rl", "UTC", urgent=True, holidays=False)
    no_holidays = book.for_destination(Platform.CONSOLE, "rl", "UTC", holidays=False)
    assert book.for_destination(Platform.CONSOLE, "rl", "UTC", urgent=True) is urgent, "kept"
    night = datetime(2026, 12, 24, 23, tzinfo=UTC)
    christmas_noon = datetime(2026, 12, 25, 12, tzinfo=UTC)
    assert not whole.is_working(night) and urgent.is_working(night)
    assert not urgent.is_working(christmas_noon) and free.is_working(christmas_noon)
    assert no_holidays.is_working(christmas_noon) and not no_holidays.is_working(night)
