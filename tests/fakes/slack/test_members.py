"""conversations.members on the strict Slack fake: what the App Home asks to know which
digest channels a person is in, paged like Slack pages it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack.api import FakeSlack
from tests.kits.slack import refused


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        server.channels["C0TEST1"].members = {"U3", "U1", "U2"}
        yield server


@pytest.fixture
def client(fake: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token=fake.bot_token, base_url=fake.api_url)


async def test_members_come_a_page_at_a_time_until_the_cursor_is_empty(
    client: AsyncWebClient,
) -> None:
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = await client.conversations_members(channel="C0TEST1", limit=2, cursor=cursor)
        seen += page["members"]
        pages += 1
        cursor = page["response_metadata"]["next_cursor"] or None
        if cursor is None:
            break
    assert (seen, pages) == (["U1", "U2", "U3"], 2)


async def test_unknown_channels_cursors_and_limits_are_refused_like_slack(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    unknown = await refused(client.conversations_members(channel="C0NOPE"))
    assert unknown["error"] == "channel_not_found"
    bad_cursor = await refused(client.conversations_members(channel="C0TEST1", cursor="zzz"))
    assert bad_cursor["error"] == "invalid_cursor"
    too_many = await refused(client.conversations_members(channel="C0TEST1", limit=1001))
    assert too_many["error"] == "invalid_limit"
    secret = fake.add_channel("G0SECRET", bot_member=False)
    secret.is_private = True
    hidden = await refused(client.conversations_members(channel="G0SECRET"))
    assert hidden["error"] == "channel_not_found", "a private channel the bot is not in"


async def test_a_parameter_the_spec_does_not_name_is_refused(client: AsyncWebClient) -> None:
    odd = await refused(
        client.api_call("conversations.members", params={"channel": "C0TEST1", "team_id": "T0TEST"})
    )
    assert odd["error"] == "invalid_arguments"
