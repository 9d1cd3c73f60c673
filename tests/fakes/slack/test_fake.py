"""The strict Slack fake, driven by the real slack_sdk client and bolt's respond()."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack.api import FakeSlack, Fault
from tests.fakes.slack.spec import SPEC_PATH
from tests.kits.clocks import SecondsClock
from tests.kits.slack import refused
from tests.kits.waiting import until

CHANNEL = "C0TEST1"


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        yield server


@pytest.fixture
def client(fake: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token=fake.bot_token, base_url=fake.api_url)


def section(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text, **extra}}


# -- accepted calls ------------------------------------------------------------------------------


async def test_valid_post_is_accepted_recorded_and_given_increasing_ts(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    blocks = [section("*PR #7422* fixes rollout", verbatim=True)]
    first = await client.chat_postMessage(channel=CHANNEL, text="digest", blocks=blocks)
    second = await client.chat_postMessage(channel=CHANNEL, text="part 2", thread_ts=first["ts"])

    assert first["channel"] == CHANNEL
    assert first["message"]["text"] == "digest"
    assert float(second["ts"]) > float(first["ts"])
    assert [(m.text, m.blocks, m.thread_ts) for m in fake.posted] == [
        ("digest", blocks, None),
        ("part 2", None, first["ts"]),
    ]
    call = fake.calls("chat.postMessage")[0]
    assert call.params["blocks"] == blocks
    assert call.headers["authorization"] == "Bearer xoxb-test-token"
    assert call.time <= fake.calls("chat.postMessage")[1].time


async def test_form_encoded_blocks_are_decoded_like_json(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    blocks = [section("from a form")]
    data = {"channel": CHANNEL, "text": "fallback", "blocks": json.dumps(blocks)}
    await client.api_call("chat.postMessage", data=data)

    assert fake.posted[0].blocks == blocks
    assert fake.requests[0].params["blocks"] == blocks


async def test_post_answer_has_only_keys_the_spec_allows(client: AsyncWebClient) -> None:
    spec = json.loads(SPEC_PATH.read_text(encoding="utf-8"))
    schema = spec["paths"]["/chat.postMessage"]["post"]["responses"]["200"]["schema"]

    answer = (await client.chat_postMessage(channel=CHANNEL, text="hi")).data

    assert isinstance(answer, dict)
    assert set(schema["required"]) <= set(answer) <= set(schema["properties"])


async def test_metadata_param_newer_than_the_spec_is_accepted_and_found_in_history(
    client: AsyncWebClient,
) -> None:
    metadata = {"event_type": "prdigest_part", "event_payload": {"key": "run-1/part-2"}}
    posted = await client.chat_postMessage(channel=CHANNEL, text="x", metadata=metadata)

    history = await client.conversations_history(channel=CHANNEL, include_all_metadata=True)

    assert [(m["ts"], m["metadata"]) for m in history["messages"]] == [(posted["ts"], metadata)]


async def test_ephemeral_update_and_join_answer_like_slack(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    fake.add_channel("C0QUIET", bot_member=False)
    ephemeral = await client.chat_postEphemeral(channel=CHANNEL, user="U0TEST1", text="only you")
    posted = await client.chat_postMessage(channel=CHANNEL, text="draft")
    updated = await client.chat_update(channel=CHANNEL, ts=posted["ts"], text="final")
    joined = await client.conversations_join(channel="C0QUIET")

    assert fake.posted[0].user == "U0TEST1"
    assert ephemeral["message_ts"] == fake.posted[0].ts
    assert updated["text"] == "final"
    assert fake.messages[(CHANNEL, posted["ts"])].text == "final"
    assert fake.posted[1].text == "draft"
    assert [u.text for u in fake.updates] == ["final"]
    assert joined["channel"]["is_member"]
    assert fake.channels["C0QUIET"].bot_member


# -- spec strictness -----------------------------------------------------------------------------


async def test_unknown_parameter_is_refused(fake: FakeSlack, client: AsyncWebClient) -> None:
    data = await refused(client.chat_postMessage(channel=CHANNEL, text="x", colour="red"))

    assert data["error"] == "invalid_arguments"
    assert data["response_metadata"]["messages"] == ["[ERROR] unknown parameter: colour"]
    assert fake.posted == []


async def test_missing_required_parameter_is_refused(client: AsyncWebClient) -> None:
    data = await refused(client.api_call("chat.update", json={"channel": CHANNEL, "text": "x"}))

    assert data["error"] == "invalid_arguments"
    assert data["response_metadata"]["messages"] == ["[ERROR] missing required parameter: ts"]


async def test_unknown_method_is_refused(client: AsyncWebClient) -> None:
    data = await refused(client.api_call("chat.postMessageNow", json={"channel": CHANNEL}))

    assert data == {"ok": False, "error": "unknown_method"}


@pytest.mark.parametrize(
    ("token", "error"), [(None, "not_authed"), ("xoxb-someone-else", "invalid_auth")]
)
async def test_missing_or_wrong_token_is_refused(
    fake: FakeSlack, token: str | None, error: str
) -> None:
    client = AsyncWebClient(token=token, base_url=fake.api_url)

    assert (await refused(client.auth_test()))["error"] == error


async def test_revoked_token_is_refused_on_every_call(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    fake.revoke_token()

    assert (await refused(client.chat_postMessage(channel=CHANNEL, text="x")))["error"] == (
        "token_revoked"
    )


# -- Block Kit limits ----------------------------------------------------------------------------


async def test_fifty_blocks_pass_and_fifty_one_are_refused(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    await client.chat_postMessage(channel=CHANNEL, text="x", blocks=[{"type": "divider"}] * 50)
    data = await refused(
        client.chat_postMessage(channel=CHANNEL, text="x", blocks=[{"type": "divider"}] * 51)
    )

    assert data["error"] == "invalid_blocks"
    assert len(fake.posted) == 1


async def test_section_text_of_3001_characters_is_refused(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    await client.chat_postMessage(channel=CHANNEL, text="x", blocks=[section("a" * 3000)])
    data = await refused(
        client.chat_postMessage(channel=CHANNEL, text="x", blocks=[section("a" * 3001)])
    )

    assert data["error"] == "invalid_blocks"
    assert "json-pointer:/blocks/0/text/text" in data["response_metadata"]["messages"][0]
    assert len(fake.posted) == 1


BAD_BLOCKS = {
    "header over 150": {"type": "header", "text": {"type": "plain_text", "text": "h" * 151}},
    "header in mrkdwn": {"type": "header", "text": {"type": "mrkdwn", "text": "h"}},
    "eleven fields": {"type": "section", "fields": [{"type": "mrkdwn", "text": "f"}] * 11},
    "field over 2000": {"type": "section", "fields": [{"type": "mrkdwn", "text": "f" * 2001}]},
    "eleven context elements": {
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": "c"}] * 11,
    },
    "button text over 75": {
        "type": "actions",
        "elements": [{"type": "button", "text": {"type": "plain_text", "text": "b" * 76}}],
    },
    "block_id over 255": {"type": "divider", "block_id": "b" * 256},
    "verbatim on plain_text": {
        "type": "section",
        "text": {"type": "plain_text", "text": "x", "verbatim": True},
    },
    "emoji on mrkdwn": section("x", emoji=True),
    "markdown type in text": {"type": "section", "text": {"type": "markdown", "text": "x"}},
    "unknown block type": {"type": "table", "rows": []},
    "unknown block key": {"type": "divider", "color": "red"},
    "empty section text": section(""),
}


@pytest.mark.parametrize("block", BAD_BLOCKS.values(), ids=BAD_BLOCKS.keys())
async def test_blocks_over_slack_limits_are_invalid(
    fake: FakeSlack, client: AsyncWebClient, block: dict[str, Any]
) -> None:
    data = await refused(client.chat_postMessage(channel=CHANNEL, text="x", blocks=[block]))

    assert data["error"] == "invalid_blocks"
    assert fake.posted == []


async def test_blocks_totalling_over_12000_characters_are_too_long(
    client: AsyncWebClient,
) -> None:
    blocks = [section("a" * 3000)] * 4 + [section("b")]

    data = await refused(client.chat_postMessage(channel=CHANNEL, text="x", blocks=blocks))

    assert data["error"] == "msg_blocks_too_long"


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ({"text": "t" * 40_001}, "msg_too_long"),
        ({"text": ""}, "no_text"),
        ({"text": "x", "link_names": True}, "fake_forbidden_param"),
        ({"text": "x", "parse": "full"}, "fake_forbidden_param"),
    ],
    ids=["text over 40000", "no text", "link_names", "parse full"],
)
@pytest.mark.filterwarnings("ignore:The top-level `text` argument is missing:UserWarning")
async def test_messages_slack_or_the_house_rules_refuse(
    client: AsyncWebClient, message: dict[str, Any], error: str
) -> None:
    assert (await refused(client.chat_postMessage(channel=CHANNEL, **message)))["error"] == error


# -- mention and link safety ---------------------------------------------------------------------


async def test_live_channel_mention_is_refused_but_escaped_one_is_accepted(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    live = await refused(client.chat_postMessage(channel=CHANNEL, text="title <!channel>"))
    await client.chat_postMessage(channel=CHANNEL, text="title &lt;!channel&gt;")

    assert live["error"] == "fake_live_mention"
    assert [m.text for m in fake.posted] == ["title &lt;!channel&gt;"]
    assert [(v.token, v.pointer) for v in fake.violations] == [("<!channel>", "/text")]


@pytest.mark.parametrize(
    "markup",
    ["<!here>", "<!everyone>", "<!subteam^S0TEAM>", "<@U0OTHER>", "<@W0OTHER|someone>"],
)
async def test_every_live_mention_in_blocks_is_refused(
    fake: FakeSlack, client: AsyncWebClient, markup: str
) -> None:
    blocks = [section(f"report says {markup}", verbatim=True)]

    data = await refused(client.chat_postMessage(channel=CHANNEL, text="x", blocks=blocks))

    assert data["error"] == "fake_live_mention"
    assert fake.violations[0].pointer == "/blocks/0/text/text"


async def test_only_allowed_users_may_be_mentioned(fake: FakeSlack, client: AsyncWebClient) -> None:
    fake.allowed_mentions.add("U0ASKER")

    await client.chat_postMessage(channel=CHANNEL, text="<@U0ASKER> here is PR 7422")
    data = await refused(client.chat_postMessage(channel=CHANNEL, text="cc <@U0OTHER>"))

    assert data["error"] == "fake_live_mention"


async def test_bare_here_is_live_only_in_non_verbatim_mrkdwn(client: AsyncWebClient) -> None:
    await client.chat_postMessage(
        channel=CHANNEL, text="x", blocks=[section("@here", verbatim=True)]
    )
    data = await refused(
        client.chat_postMessage(channel=CHANNEL, text="x", blocks=[section("@here")])
    )

    assert data["error"] == "fake_live_mention"


@pytest.mark.parametrize(
    "link",
    [
        "<javascript:alert(1)|PR 7422>",
        "<mailto:a@b.c>",
        "<https://evil.example|https://github.com/o/r/pull/1>",
        "a < b > c",
    ],
)
async def test_unsafe_links_are_refused(client: AsyncWebClient, link: str) -> None:
    data = await refused(client.chat_postMessage(channel=CHANNEL, text=link))

    assert data["error"] == "fake_unsafe_link"


async def test_https_pr_links_are_accepted(fake: FakeSlack, client: AsyncWebClient) -> None:
    link = "<https://github.com/verl-project/verl/pull/7422|#7422 fix: rollout &lt;b&gt;>"
    button = {
        "type": "button",
        "text": {"type": "plain_text", "text": "Open"},
        "url": "https://github.com/verl-project/verl/pull/7422",
    }
    blocks = [section(link, verbatim=True), {"type": "actions", "elements": [button]}]

    await client.chat_postMessage(channel=CHANNEL, text=link, blocks=blocks)

    assert fake.posted[0].blocks == blocks
    assert fake.violations == []


# -- channel state -------------------------------------------------------------------------------


async def test_posting_where_the_bot_cannot_post_is_refused(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    fake.add_channel("C0OLD", archived=True)
    fake.add_channel("C0QUIET", bot_member=False)

    errors = [
        (await refused(client.chat_postMessage(channel=channel, text="x")))["error"]
        for channel in ("C0NOPE", "C0OLD", "C0QUIET")
    ]

    assert errors == ["channel_not_found", "is_archived", "not_in_channel"]
    assert fake.posted == []


async def test_conversations_info_reports_the_archived_flag(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    fake.add_channel("C0OLD", archived=True)

    info = await client.conversations_info(channel="C0OLD")

    assert info["channel"]["is_archived"] is True
    assert (await refused(client.conversations_info(channel="C0NOPE")))["error"] == (
        "channel_not_found"
    )


async def test_users_info_reports_admin_and_owner_flags(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    fake.add_user("U0ADMIN", is_admin=True)
    fake.add_user("U0OWNER", is_owner=True)

    flags = [
        ((await client.users_info(user=u))["user"]["is_admin"], fake.users[u]["is_owner"])
        for u in ("U0ADMIN", "U0OWNER", "U0TEST1")
    ]

    assert flags == [(True, False), (False, True), (False, False)]
    assert (await refused(client.users_info(user="U0GHOST")))["error"] == "user_not_found"


# -- scripted faults -----------------------------------------------------------------------------


@pytest.mark.parametrize("retry_after", ["7", "abc", "7.5", ""])
async def test_scripted_429_reaches_the_client_with_its_retry_after(
    fake: FakeSlack, client: AsyncWebClient, retry_after: str
) -> None:
    fake.script("chat.postMessage", Fault.rate_limited(retry_after=retry_after))

    with pytest.raises(SlackApiError) as caught:
        await client.chat_postMessage(channel=CHANNEL, text="x")
    await client.chat_postMessage(channel=CHANNEL, text="after the wait")

    assert caught.value.response.status_code == 429
    assert caught.value.response.headers["Retry-After"] == retry_after
    assert caught.value.response["error"] == "ratelimited"
    assert [m.text for m in fake.posted] == ["after the wait"]


async def test_faults_for_one_channel_leave_others_alone(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    fake.script("chat.postMessage", Fault.error("not_in_channel"), channel="C0TEST2")

    await client.chat_postMessage(channel=CHANNEL, text="a")
    data = await refused(client.chat_postMessage(channel="C0TEST2", text="b"))

    assert data == {"ok": False, "error": "not_in_channel"}
    assert [m.channel for m in fake.posted] == [CHANNEL]
    assert fake.pending_faults() == 0


async def test_server_error_reaches_the_client_as_its_status(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    fake.script("chat.postMessage", Fault.server_error(503))

    with pytest.raises(SlackApiError) as caught:
        await client.chat_postMessage(channel=CHANNEL, text="x")

    assert caught.value.response.status_code == 503
    assert fake.posted == []


async def test_reset_after_accept_posts_but_the_client_sees_a_connection_error(
    fake: FakeSlack,
) -> None:
    client = AsyncWebClient(token=fake.bot_token, base_url=fake.api_url, retry_handlers=[])
    fake.script("chat.postMessage", Fault.reset_after_accept())

    with pytest.raises(aiohttp.ClientConnectionError):
        await client.chat_postMessage(channel=CHANNEL, text="accepted, never answered")

    assert [m.text for m in fake.posted] == ["accepted, never answered"]
    assert fake.requests[0].status is None


async def test_default_client_retries_a_reset_and_posts_twice(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    """Why the outbox must not lean on slack_sdk's default connection-error retry."""
    fake.script("chat.postMessage", Fault.reset_after_accept())

    await client.chat_postMessage(channel=CHANNEL, text="digest part 1")

    assert [m.text for m in fake.posted] == ["digest part 1", "digest part 1"]


async def test_a_stall_past_the_client_timeout_still_posts_the_message(fake: FakeSlack) -> None:
    # aiohttp takes a fraction of a second; slack_sdk's annotation says int.
    timeout: Any = 0.1
    client = AsyncWebClient(
        token=fake.bot_token, base_url=fake.api_url, timeout=timeout, retry_handlers=[]
    )
    fake.script("chat.postMessage", Fault.delay(0.3))

    with pytest.raises(asyncio.TimeoutError):
        await client.chat_postMessage(channel=CHANNEL, text="slow but delivered")

    await until(lambda: fake.posted, what="the stalled post never landed")  # 0.3 s after the call
    assert [m.text for m in fake.posted] == ["slow but delivered"]


async def test_posts_under_a_second_apart_are_counted_and_refused_when_enforced() -> None:
    clock = SecondsClock()
    async with FakeSlack(enforce_rate=True, rate_burst=2, clock=clock) as fake:
        client = AsyncWebClient(token=fake.bot_token, base_url=fake.api_url)
        await client.chat_postMessage(channel=CHANNEL, text="1")
        await client.chat_postMessage(channel=CHANNEL, text="2")
        third = await refused(client.chat_postMessage(channel=CHANNEL, text="3"))
        clock.now += 1.0
        await client.chat_postMessage(channel=CHANNEL, text="4")
        await client.chat_postMessage(channel="C0TEST2", text="other channel")

    assert third["error"] == "ratelimited"
    assert [m.text for m in fake.posted] == ["1", "2", "4", "other channel"]
    assert fake.rate_violations == {CHANNEL: 2}


# -- response_url --------------------------------------------------------------------------------


async def test_response_url_takes_five_posts_then_answers_used_url(fake: FakeSlack) -> None:
    respond = AsyncRespond(response_url=fake.response_url("R1", channel=CHANNEL, user="U0TEST1"))

    answers = [await respond(text=f"answer {n}") for n in range(6)]

    assert [(a.status_code, a.body) for a in answers] == [(200, "ok")] * 5 + [(404, "used_url")]
    assert [(m.text, m.user, m.response_type) for m in fake.posted][:1] == [
        ("answer 0", "U0TEST1", "ephemeral")
    ]
    assert len(fake.posted) == 5


async def test_respond_retries_a_reset_response_url_post_and_posts_twice(fake: FakeSlack) -> None:
    """bolt's respond() retries connection errors too: a reset costs a use and a duplicate."""
    respond = AsyncRespond(response_url=fake.response_url())
    fake.script("response_url", Fault.reset_after_accept())

    answer = await respond(text="answer")

    assert answer.status_code == 200
    assert [m.text for m in fake.posted] == ["answer", "answer"]
    assert [call.status for call in fake.calls("response_url")] == [None, 200]


async def test_response_url_expires_after_thirty_minutes() -> None:
    clock = SecondsClock()
    async with FakeSlack(clock=clock) as fake:
        respond = AsyncRespond(response_url=fake.response_url())
        clock.now += 30 * 60 + 1
        answer = await respond(text="too late")

    assert (answer.status_code, answer.body) == (404, "expired_url")
    assert fake.posted == []


async def test_response_url_applies_the_message_checks(fake: FakeSlack) -> None:
    respond = AsyncRespond(response_url=fake.response_url())

    live = await respond(text="PR title <!here>", response_type="in_channel")
    too_many = await respond(text="x", blocks=[{"type": "divider"}] * 51)
    fine = await respond(text="PR title &lt;!here&gt;", response_type="in_channel")

    assert [(a.status_code, a.body) for a in (live, too_many, fine)] == [
        (400, "fake_live_mention"),
        (400, "invalid_blocks"),
        (200, "ok"),
    ]
    assert [(m.text, m.user) for m in fake.posted] == [("PR title &lt;!here&gt;", None)]
