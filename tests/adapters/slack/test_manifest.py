"""The Slack app manifest and its guide agree with what the code serves."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import yaml

from bot.adapters.slack.adapter import EVENTS_PATH
from bot.adapters.slack.listeners import BUTTON_SECTIONS, SLASH_COMMAND
from bot.chat.commands import COMMAND_TABLE
from bot.chat.requests import Verb
from tests.kits.paths import ROOT

MANIFEST = ROOT / "deploy" / "slack-app-manifest.yaml"
GUIDE = ROOT / "docs" / "slack.md"
SCOPES = {
    "commands",
    "chat:write",
    "app_mentions:read",
    "users:read",
    "channels:read",
    "groups:read",
    "channels:history",
    "groups:history",
    "im:history",
    "reactions:read",
}


def _manifest() -> dict[str, Any]:
    data = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_every_request_url_is_the_events_endpoint() -> None:
    manifest = _manifest()
    settings = manifest["settings"]
    urls = [
        *(command["url"] for command in manifest["features"]["slash_commands"]),
        settings["event_subscriptions"]["request_url"],
        settings["interactivity"]["request_url"],
    ]
    assert len(urls) == 3
    for url in urls:
        parts = urlsplit(url)
        assert (parts.scheme, parts.netloc, parts.path) == ("https", "bot.example.com", EVENTS_PATH)
    assert settings["interactivity"]["is_enabled"] is True


def test_the_manifest_declares_the_command_and_event_the_bot_handles() -> None:
    manifest = _manifest()
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == [SLASH_COMMAND]
    assert manifest["settings"]["event_subscriptions"]["bot_events"] == [
        "app_mention",
        "app_home_opened",
        "reaction_added",
    ]
    home = manifest["features"]["app_home"]
    assert home["home_tab_enabled"] and home["messages_tab_enabled"]


def test_the_app_asks_for_the_fewest_scopes_and_the_guide_explains_each() -> None:
    scopes = _manifest()["oauth_config"]["scopes"]
    assert set(scopes) == {"bot"}, "no user scopes"
    assert set(scopes["bot"]) == SCOPES
    guide = GUIDE.read_text(encoding="utf-8")
    for scope in SCOPES:
        assert re.search(rf"^\| `{re.escape(scope)}` \| \S", guide, re.MULTILINE), scope


def test_the_guide_lists_every_subcommand_and_the_button_sections() -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    for spec in COMMAND_TABLE:
        if spec.verb is not Verb.PR:
            assert f"`/pr {spec.verb.value}" in guide, spec.verb
    for section in BUTTON_SECTIONS.values():
        assert section.value in guide
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "check-config"):
        assert name in guide
