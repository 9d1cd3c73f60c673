"""Modals and the Home tab on the strict Slack fake, and the interaction payloads it builds,
driven by the real slack_sdk client and a real slack_bolt AsyncApp."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack.api import FakeSlack
from tests.fakes.slack.interactions import Inbound
from tests.kits.clocks import SecondsClock
from tests.kits.slack import refused

USER = "U0TEST1"
SECRET = "fake-views-signing-secret"


@pytest.fixture
def clock() -> SecondsClock:
    return SecondsClock()


@pytest.fixture
async def fake(clock: SecondsClock) -> AsyncIterator[FakeSlack]:
    async with FakeSlack(clock=clock) as server:
        yield server


@pytest.fixture
def client(fake: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token=fake.bot_token, base_url=fake.api_url)


def tag_option(value: str, text: str | None = None) -> dict[str, Any]:
    return {"text": {"type": "plain_text", "text": text or value}, "value": value}


def modal(**changes: Any) -> dict[str, Any]:
    """A subscribe modal: a multi-select of tags and a cadence text field."""
    tags = {
        "type": "multi_static_select",
        "action_id": "pick",
        "options": [tag_option("breaking"), tag_option("rollout")],
    }
    view: dict[str, Any] = {
        "type": "modal",
        "callback_id": "subscribe",
        "title": {"type": "plain_text", "text": "Subscribe"},
        "submit": {"type": "plain_text", "text": "Subscribe"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "private_metadata": json.dumps({"channel": "C0TEST1"}),
        "blocks": [
            {
                "type": "input",
                "block_id": "tags",
                "label": {"type": "plain_text", "text": "Tags"},
                "element": tags,
            },
            {
                "type": "input",
                "block_id": "cadence",
                "label": {"type": "plain_text", "text": "Cadence"},
                "element": {"type": "plain_text_input", "action_id": "when"},
            },
        ],
    }
    view.update(changes)
    return view


def home(text: str = "Your subscriptions") -> dict[str, Any]:
    remove = {"type": "button", "action_id": "remove", "value": "1", "text": plain("Remove")}
    return {
        "type": "home",
        "blocks": [
            {"type": "section", "block_id": "sub-1", "text": plain(text), "accessory": remove}
        ],
    }


def plain(text: str) -> dict[str, str]:
    return {"type": "plain_text", "text": text}


def section(number: int) -> dict[str, Any]:
    return {"type": "section", "text": plain(f"line {number}")}


# -- views.open ---------------------------------------------------------------------------------


async def test_a_modal_opens_with_an_issued_trigger_and_is_shown_to_its_user(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    trigger_id = fake.issue_trigger_id(USER)

    answer = await client.views_open(trigger_id=trigger_id, view=modal())

    view = answer["view"]
    assert view["id"].startswith("V")
    assert (view["type"], view["callback_id"], view["root_view_id"]) == (
        "modal",
        "subscribe",
        view["id"],
    )
    assert view["state"] == {"values": {}} and view["hash"]
    (shown,) = fake.views_for(USER)
    assert shown.id == view["id"] and shown.current == modal()
    assert [(c.method, c.user) for c in fake.view_calls] == [("views.open", USER)]


async def test_a_trigger_id_is_single_use_and_expires_after_three_seconds(
    fake: FakeSlack, client: AsyncWebClient, clock: SecondsClock
) -> None:
    used = fake.issue_trigger_id(USER)
    await client.views_open(trigger_id=used, view=modal())
    stale = fake.issue_trigger_id(USER)
    clock.now += 3.5

    again = await refused(client.views_open(trigger_id=used, view=modal()))
    late = await refused(client.views_open(trigger_id=stale, view=modal()))
    made_up = await refused(client.views_open(trigger_id="1337.1.abcdef", view=modal()))

    assert [again["error"], late["error"], made_up["error"]] == [
        "exchanged_trigger_id",
        "expired_trigger_id",
        "invalid_trigger_id",
    ]
    fresh = fake.issue_trigger_id(USER)
    clock.now += 2.9
    assert (await client.views_open(trigger_id=fresh, view=modal()))["ok"]


@pytest.mark.parametrize(
    ("changes", "pointer"),
    [
        ({"title": plain("x" * 25)}, "/view/title/text"),
        ({"submit": plain("x" * 25)}, "/view/submit/text"),
        ({"close": plain("x" * 25)}, "/view/close/text"),
        ({"title": {"type": "mrkdwn", "text": "Subscribe"}}, "/view/title/type"),
        ({"callback_id": "c" * 256}, "/view/callback_id"),
        ({"private_metadata": "m" * 3001}, "/view/private_metadata"),
        ({"external_id": "e" * 256}, "/view/external_id"),
        ({"blocks": [section(n) for n in range(101)]}, "/view/blocks"),
        ({"blocks": [{"type": "markdown", "text": "**x**"}]}, "/view/blocks/0/type"),
        ({"colour": "red"}, "/view/colour"),
    ],
)
async def test_a_modal_over_slacks_limits_is_refused_with_a_pointer(
    fake: FakeSlack, client: AsyncWebClient, changes: dict[str, Any], pointer: str
) -> None:
    answer = await refused(
        client.views_open(trigger_id=fake.issue_trigger_id(), view=modal(**changes))
    )

    assert answer["error"] == "invalid_arguments"
    assert any(f"[json-pointer:{pointer}]" in m for m in answer["response_metadata"]["messages"])
    assert fake.views_for(USER) == []


async def test_a_modal_at_the_limits_is_accepted(fake: FakeSlack, client: AsyncWebClient) -> None:
    view = modal(
        title=plain("t" * 24),
        callback_id="c" * 255,
        private_metadata="m" * 3000,
        blocks=[section(n) for n in range(100)],
    )

    assert (await client.views_open(trigger_id=fake.issue_trigger_id(), view=view))["ok"]


@pytest.mark.parametrize(
    ("element", "pointer"),
    [
        ({"options": [tag_option("long", "t" * 76)]}, "/options/0/text/text"),
        ({"options": [tag_option("v" * 151)]}, "/options/0/value"),
        ({"options": [tag_option(f"t{n}") for n in range(101)]}, "/options"),
        ({"initial_options": [tag_option("gone")]}, "/initial_options/0"),
        ({"options": []}, "/options"),
    ],
)
async def test_a_bad_tag_select_is_refused(
    fake: FakeSlack, client: AsyncWebClient, element: dict[str, Any], pointer: str
) -> None:
    view = modal()
    view["blocks"][0]["element"].update(element)

    answer = await refused(client.views_open(trigger_id=fake.issue_trigger_id(), view=view))

    where = f"[json-pointer:/view/blocks/0/element{pointer}]"
    assert any(where in message for message in answer["response_metadata"]["messages"])


async def test_a_view_must_be_a_modal_for_open_and_an_unknown_parameter_is_refused(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    as_home = await refused(client.views_open(trigger_id=fake.issue_trigger_id(), view=home()))
    extra = await refused(
        client.api_call(
            "views.open",
            json={"trigger_id": fake.issue_trigger_id(), "view": modal(), "user_id": USER},
        )
    )
    unparsed = await refused(
        client.api_call(
            "views.open", data={"trigger_id": fake.issue_trigger_id(), "view": "{not json"}
        )
    )

    assert as_home["response_metadata"]["messages"] == [
        "[ERROR] must be 'modal' [json-pointer:/view/type]"
    ]
    assert extra["response_metadata"]["messages"] == ["[ERROR] unknown parameter: user_id"]
    assert unparsed["error"] == "invalid_arguments"


async def test_input_blocks_are_refused_in_a_message(client: AsyncWebClient) -> None:
    block = modal()["blocks"][1]

    answer = await refused(client.chat_postMessage(channel="C0TEST1", text="x", blocks=[block]))

    assert answer["error"] == "invalid_blocks"


async def test_an_external_id_is_unique(fake: FakeSlack, client: AsyncWebClient) -> None:
    await client.views_open(trigger_id=fake.issue_trigger_id(), view=modal(external_id="sub-1"))

    again = modal(external_id="sub-1")
    answer = await refused(client.views_open(trigger_id=fake.issue_trigger_id(), view=again))

    assert answer["error"] == "duplicate_external_id"


# -- views.update -------------------------------------------------------------------------------


async def test_update_by_id_or_external_id_checks_the_hash(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    opened = await client.views_open(
        trigger_id=fake.issue_trigger_id(), view=modal(external_id="sub-1")
    )
    view_id, first_hash = opened["view"]["id"], opened["view"]["hash"]
    step_two = modal(external_id="sub-1", title=plain("Pick a cadence"))

    updated = await client.views_update(view_id=view_id, view=step_two, hash=first_hash)
    stale = await refused(client.views_update(view_id=view_id, view=modal(), hash=first_hash))
    by_external = await client.views_update(external_id="sub-1", view=modal(external_id="sub-1"))

    assert updated["view"]["title"]["text"] == "Pick a cadence"
    assert updated["view"]["hash"] != first_hash
    assert stale["error"] == "hash_conflict"
    assert by_external["view"]["id"] == view_id
    assert len(fake.views_for(USER)[0].versions) == 3


async def test_update_of_an_unknown_or_unnamed_view_is_refused(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    unknown = await refused(client.views_update(view_id="V0NOPE", view=modal()))
    unnamed = await refused(client.api_call("views.update", json={"view": modal()}))
    no_view = await refused(client.api_call("views.update", json={"view_id": "V0NOPE"}))

    assert unknown["error"] == "not_found"
    assert unnamed["error"] == no_view["error"] == "invalid_arguments"
    assert no_view["response_metadata"]["messages"] == ["[ERROR] missing required parameter: view"]


# -- views.publish ------------------------------------------------------------------------------


async def test_publish_shows_one_home_tab_per_user_and_checks_the_hash(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    first = await client.views_publish(user_id=USER, view=home("none yet"))
    second = await client.views_publish(
        user_id=USER, view=home("1. breaking"), hash=first["view"]["hash"]
    )
    stale = await refused(
        client.views_publish(user_id=USER, view=home(), hash=first["view"]["hash"])
    )

    assert second["view"]["id"] == first["view"]["id"]
    assert stale["error"] == "hash_conflict"
    (shown,) = fake.views_for(USER)
    assert shown.type == "home"
    assert shown.current["blocks"][0]["text"]["text"] == "1. breaking"


async def test_publish_needs_a_home_view_a_known_user_and_at_most_100_blocks(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    as_modal = await refused(client.views_publish(user_id=USER, view=modal()))
    nobody = await refused(client.views_publish(user_id="U0NOBODY", view=home()))
    too_long = home()
    too_long["blocks"] = [section(n) for n in range(101)]
    overflow = await refused(client.views_publish(user_id=USER, view=too_long))
    fake.views.home_enabled = False
    disabled = await refused(client.views_publish(user_id=USER, view=home()))

    assert [as_modal["error"], nobody["error"], overflow["error"]] == ["invalid_arguments"] * 3
    assert disabled["error"] == "not_enabled"
    assert fake.views_for(USER) == []


# -- payloads through bolt ----------------------------------------------------------------------


async def dispatch(app: AsyncApp, inbound: Inbound) -> int:
    headers: dict[str, str | Sequence[str]] = {**inbound.headers(SECRET)}
    request = AsyncBoltRequest(body=inbound.body.decode(), headers=headers)
    response = await app.async_dispatch(request)
    return response.status


def bolt_app(fake: FakeSlack) -> AsyncApp:
    """A bolt app with a fixed identity, like the bot's. Its handlers call the test's own client:
    bolt's per-request copies add a `team_id` argument the 2021 spec does not know."""

    async def authorize(enterprise_id: str | None, team_id: str | None) -> AuthorizeResult:
        return AuthorizeResult(
            enterprise_id=enterprise_id,
            team_id=team_id,
            bot_token=fake.bot_token,
            bot_user_id="U0BOT",
            bot_id="B0BOT",
        )

    client = AsyncWebClient(base_url=fake.api_url)
    return AsyncApp(
        signing_secret=SECRET, client=client, authorize=authorize, process_before_response=True
    )


async def test_bolt_opens_the_modal_from_a_slash_command_and_reads_the_submission(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    app = bolt_app(fake)
    submitted: list[dict[str, Any]] = []

    @app.command("/pr")
    async def open_modal(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        await client.views_open(trigger_id=body["trigger_id"], view=modal())

    @app.view("subscribe")
    async def on_submit(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        await ack()
        submitted.append({"user": body["user"]["id"], "values": view["state"]["values"]})

    assert await dispatch(app, fake.interactions.slash_command("subscribe")) == 200
    (shown,) = fake.views_for(USER)
    choices = {"tags": ["breaking", "rollout"], "cadence": "daily 09:00"}
    assert await dispatch(app, fake.interactions.view_submission(shown.id, choices)) == 200

    (got,) = submitted
    assert got["user"] == USER
    tags = got["values"]["tags"]["pick"]["selected_options"]
    assert [option["value"] for option in tags] == ["breaking", "rollout"]
    assert got["values"]["cadence"]["when"] == {"type": "plain_text_input", "value": "daily 09:00"}


async def test_bolt_publishes_home_on_app_home_opened_and_hears_its_buttons(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    app = bolt_app(fake)
    pressed: list[tuple[str, str, str]] = []

    @app.event("app_home_opened")
    async def publish(event: dict[str, Any]) -> None:
        await client.views_publish(user_id=event["user"], view=home())

    @app.action("remove")
    async def remove(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        action = body["actions"][0]
        pressed.append((body["container"]["type"], action["block_id"], action["value"]))
        await client.views_open(trigger_id=body["trigger_id"], view=modal())

    assert await dispatch(app, fake.interactions.app_home_opened(USER)) == 200
    shown = fake.views.home_of(USER)
    assert shown is not None
    clicked = fake.interactions.block_actions("remove", view_id=shown.id)
    assert await dispatch(app, clicked) == 200

    assert pressed == [("view", "sub-1", "1")]
    assert [view.type for view in fake.views_for(USER)] == ["home", "modal"]


async def test_bolt_hears_a_select_on_a_posted_message(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    select = {
        "type": "static_select",
        "action_id": "cadence",
        "options": [tag_option("daily"), tag_option("weekly")],
    }
    posted = await client.chat_postMessage(
        channel="C0TEST1",
        text="pick",
        blocks=[{"type": "actions", "block_id": "when", "elements": [select]}],
    )
    message = fake.posted[-1]
    assert message.ts == posted["ts"]
    app = bolt_app(fake)
    chosen: list[str] = []

    @app.action("cadence")
    async def on_select(ack: Any, action: dict[str, Any]) -> None:
        await ack()
        chosen.append(action["selected_option"]["value"])

    inbound = fake.interactions.block_actions("cadence", message=message, choice="weekly")
    assert await dispatch(app, inbound) == 200

    assert chosen == ["weekly"]
    assert inbound.payload["container"]["channel_id"] == "C0TEST1"


async def test_payload_helpers_refuse_what_the_user_cannot_see(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    opened = await client.views_open(trigger_id=fake.issue_trigger_id(), view=modal())
    view_id = opened["view"]["id"]

    with pytest.raises(ValueError, match="no input block"):
        fake.interactions.view_submission(view_id, {"channel": "C1"})
    with pytest.raises(ValueError, match="no option"):
        fake.interactions.view_submission(view_id, {"tags": ["missing"]})
    with pytest.raises(ValueError, match="not shown"):
        fake.interactions.view_submission("V0NOPE", {})
    with pytest.raises(ValueError, match="nothing with action_id"):
        fake.interactions.block_actions("remove", view_id=view_id)


async def test_each_payload_carries_a_fresh_trigger_the_fake_accepts(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    opened = await client.views_open(trigger_id=fake.issue_trigger_id(), view=modal())
    submission = fake.interactions.view_submission(opened["view"]["id"], {"cadence": "now"})

    trigger_id = submission.payload["trigger_id"]
    assert submission.trigger_id == trigger_id
    assert (await client.views_open(trigger_id=trigger_id, view=modal()))["ok"]
