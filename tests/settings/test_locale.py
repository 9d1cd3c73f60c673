"""The config's top-level `locale` is the one language default (issue 15): zh unless set, what a
channel without its own reads (also in the destination `sync_config` stores), and a value
neither zh nor en is refused with its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.models import Locale, Platform
from bot.core.store.sql.db import create_engine, migrate
from bot.core.store.subscriptions import SubscriptionStore
from bot.settings import BotConfig, ConfigError, default_config, load_config


def _config(locale: str | None = None) -> BotConfig:
    data: dict[str, object] = {
        "channels": [
            {"name": "plain", "platform": "console", "target": "stdout"},
            {"name": "en-team", "platform": "slack", "target": "C1", "locale": "en"},
            {"name": "zh-team", "platform": "slack", "target": "C2", "locale": "zh"},
        ]
    }
    if locale is not None:
        data["locale"] = locale
    return BotConfig.model_validate(data)


def test_the_default_locale_is_zh_as_the_digests_read() -> None:
    assert BotConfig().locale is Locale.ZH
    config = default_config()
    assert config.channel_locale(config.channel("console")) is Locale.ZH


@pytest.mark.parametrize("locale", ["zh", "en"])
def test_a_channel_without_locale_inherits_the_configs(locale: str) -> None:
    config = _config(locale)
    assert config.channel("plain").locale is None
    assert config.channel_locale(config.channel("plain")) is Locale(locale)


def test_a_channels_own_locale_wins() -> None:
    for config in (_config("zh"), _config("en"), _config()):
        assert config.channel_locale(config.channel("en-team")) is Locale.EN
        assert config.channel_locale(config.channel("zh-team")) is Locale.ZH


def test_a_locale_we_do_not_speak_is_refused_with_its_key(tmp_path: Path) -> None:
    path = tmp_path / "bot.yaml"
    path.write_text("locale: fr\n", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert str(refused.value) == f"invalid config {path}:\n  locale: Input should be 'zh' or 'en'"


async def test_a_config_channels_destination_stores_the_inherited_locale(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'bot.db'}")
    try:
        await migrate(engine)
        store = SubscriptionStore(engine)
        await store.sync_config(_config("en"))
        plain = (await store.of(Platform.CONSOLE, "stdout"))[0]
        zh_team = (await store.of(Platform.SLACK, "C2"))[0]
        assert plain is not None and plain.locale is Locale.EN
        assert zh_team is not None and zh_team.locale is Locale.ZH
        await store.sync_config(_config("zh"))  # the default changed: so does the channel's
        plain = (await store.of(Platform.CONSOLE, "stdout"))[0]
        assert plain is not None and plain.locale is Locale.ZH
    finally:
        await engine.dispose()
