"""Who owns what is made in a chat: a Slack DM and a Telegram private chat are the person's."""

from __future__ import annotations

import pytest

from bot.adapters.base import is_private
from bot.core.models import Platform


@pytest.mark.parametrize(
    ("platform", "chat", "user", "private"),
    [
        (Platform.SLACK, "D0123", "U1", True),
        (Platform.SLACK, "C0123", "U1", False),
        (Platform.SLACK, "G0123", "U1", False),
        (Platform.TELEGRAM, "4242", "4242", True),
        (Platform.TELEGRAM, "-100777", "42", False),
        (Platform.TELEGRAM, "-100777", "-100777", False),  # an anonymous admin, as the group
        (Platform.CONSOLE, "stdout", "stdout", False),
    ],
)
def test_only_a_dm_or_a_private_chat_is_private(
    platform: Platform, chat: str, user: str, private: bool
) -> None:
    assert is_private(platform, chat, user) is private
