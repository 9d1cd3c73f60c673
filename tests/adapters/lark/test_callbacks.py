"""Feishu callbacks open only when they are Feishu's: each forgery is refused, by status and
reason, and the test kit's requests are the ones the SDK's own dispatcher accepts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from lark_oapi.api.im.v1.model.p2_im_message_receive_v1 import P2ImMessageReceiveV1
from lark_oapi.core.json import JSON
from lark_oapi.core.model import RawRequest
from lark_oapi.event.callback.model.p2_card_action_trigger import (
    P2CardActionTrigger,
    P2CardActionTriggerResponse,
)
from lark_oapi.event.dispatcher_handler import EventDispatcherHandler

from bot.adapters.lark.callbacks import (
    MAX_BODY_BYTES,
    REPLAY_WINDOW_SECONDS,
    CallbackRefused,
    Challenge,
    Envelope,
    LarkSecrets,
    open_callback,
)
from tests.fakes.lark.events import (
    card_action_event,
    encrypt,
    message_event,
    seal,
    signature,
    url_verification,
)

TOKEN = "vt_Fixture0Token0000000000000001"
KEY = "ek_Fixture0Key000000000000000001"
SEALED = LarkSecrets(verification_token=TOKEN, encrypt_key=KEY)
PLAIN = LarkSecrets(verification_token=TOKEN, encrypt_key=None)
OPEN = LarkSecrets(verification_token=None, encrypt_key=None)
NOW = 1_788_000_000.0
BOT = "ou_bot00000000000000000001"
ALICE = "ou_alice000000000000000001"
GROUP = "oc_team00000000000000000001"


def mention(*, token: str = TOKEN, event_id: str = "ev_0001") -> dict[str, Any]:
    return message_event(
        token=token,
        event_id=event_id,
        chat_id=GROUP,
        chat_type="group",
        sender_open_id=ALICE,
        text="@_user_1 7422 风险",
        mentions=[("@_user_1", BOT, "prdigest")],
        message_id="om_0000000000000000000001",
    )


def press(*, token: str = TOKEN) -> dict[str, Any]:
    return card_action_event(
        token=token,
        event_id="ev_0002",
        operator_open_id=ALICE,
        chat_id=GROUP,
        message_id="om_0000000000000000000002",
        value={"action": "mute", "repo": "acme/api"},
    )


def refused(
    raw: bytes, headers: dict[str, str], secrets: LarkSecrets = SEALED, now: float = NOW
) -> CallbackRefused:
    with pytest.raises(CallbackRefused) as caught:
        open_callback(raw, headers, secrets, now)
    return caught.value


def opened(raw: bytes, headers: dict[str, str], secrets: LarkSecrets = SEALED) -> Envelope:
    result = open_callback(raw, headers, secrets, NOW)
    assert isinstance(result, Envelope)
    return result


# --- accepted ---------------------------------------------------------------------------


@pytest.mark.parametrize("secrets", [SEALED, PLAIN, OPEN], ids=["sealed", "plain", "open"])
def test_a_message_opens_to_its_v2_body(secrets: LarkSecrets) -> None:
    body = mention()
    envelope = opened(*seal(body, secrets, timestamp=int(NOW)), secrets)
    assert envelope == Envelope(body, "ev_0001", "im.message.receive_v1")


def test_a_card_press_opens() -> None:
    envelope = opened(*seal(press(), SEALED, timestamp=int(NOW)))
    assert envelope.event_type == "card.action.trigger"
    assert envelope.body["event"]["action"]["value"] == {"action": "mute", "repo": "acme/api"}


@pytest.mark.parametrize("skew", [-REPLAY_WINDOW_SECONDS, REPLAY_WINDOW_SECONDS])
def test_a_timestamp_at_the_edge_of_the_window_passes(skew: float) -> None:
    opened(*seal(mention(), SEALED, timestamp=int(NOW + skew)))


def test_feishus_retry_with_a_fresh_timestamp_is_not_refused_here() -> None:
    first = opened(*seal(mention(), SEALED, timestamp=int(NOW) - 20, nonce="n1"))
    retry = opened(*seal(mention(), SEALED, timestamp=int(NOW), nonce="n2"))
    assert first.event_id == retry.event_id  # the adapter's dedupe drops the second


def test_header_names_are_read_in_any_case() -> None:
    raw, headers = seal(mention(), SEALED, timestamp=int(NOW))
    opened(raw, {name.lower(): value for name, value in headers.items()})
    opened(raw, {name.upper(): value for name, value in headers.items()})


def test_without_a_token_configured_any_token_passes() -> None:
    opened(*seal(mention(token="whatever"), OPEN, timestamp=int(NOW)), OPEN)


@pytest.mark.parametrize("secrets", [SEALED, PLAIN, OPEN], ids=["sealed", "plain", "open"])
def test_the_url_check_answers_its_challenge(secrets: LarkSecrets) -> None:
    raw, _ = seal(url_verification(TOKEN, "ch-4f1e"), secrets, timestamp=int(NOW))
    # Feishu does not sign the URL check: it opens without signature headers.
    assert open_callback(raw, {}, secrets, NOW) == Challenge("ch-4f1e")


# --- refused: the body ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"x" * (MAX_BODY_BYTES + 1), "exceeds"),
        (b"{not json", "request body is not JSON"),
        (b"\xff\xfe{}", "request body is not JSON"),
        (b"[1, 2]", "JSON list, not an object"),
        (b'{"encrypt": 7}', "encrypt is not a string"),
        (b'{"encrypt": "not base64!"}', "does not decrypt"),
        (b'{"encrypt": "AAAA"}', "does not decrypt"),
    ],
)
def test_a_malformed_body_is_400(raw: bytes, reason: str) -> None:
    problem = refused(raw, {})
    assert (problem.status, reason in problem.reason) == (400, True), problem.reason


def test_a_body_sealed_with_another_key_does_not_decrypt() -> None:
    other = LarkSecrets(verification_token=TOKEN, encrypt_key="ek_another_key")
    problem = refused(*seal(mention(), other, timestamp=int(NOW)))
    assert problem.status == 400
    assert "decrypt" in problem.reason


def test_an_encrypted_non_object_is_400() -> None:
    raw = json.dumps({"encrypt": encrypt(b'"text"', KEY)}).encode()
    problem = refused(raw, {})
    assert (problem.status, problem.reason) == (400, "decrypted body is a JSON str, not an object")


def test_an_encrypted_body_without_a_key_is_401() -> None:
    problem = refused(*seal(mention(), SEALED, timestamp=int(NOW)), PLAIN)
    assert problem.status == 401
    assert problem.reason == "encrypted event but LARK_ENCRYPT_KEY is not set"


@pytest.mark.parametrize("body", [mention(), url_verification(TOKEN, "ch-1")], ids=["event", "url"])
def test_a_plain_body_is_forged_once_a_key_is_set(body: dict[str, Any]) -> None:
    raw, headers = seal(body, PLAIN, timestamp=int(NOW))
    problem = refused(raw, headers)
    assert (problem.status, problem.reason) == (401, "plain body but LARK_ENCRYPT_KEY is set")


def test_a_v1_event_is_400() -> None:
    v1: dict[str, Any] = {"uuid": "41b5f371157e3d5341b38b20396e77a3", "token": TOKEN}
    v1["event"] = {"type": "message", "text": "hi"}
    problem = refused(*seal(v1, SEALED, timestamp=int(NOW)))
    assert problem.status == 400
    assert "only 2.0 events are read" in problem.reason


@pytest.mark.parametrize("field", ["event_id", "event_type"])
def test_an_event_without_its_id_or_type_is_400(field: str) -> None:
    body = mention()
    del body["header"][field]
    problem = refused(*seal(body, SEALED, timestamp=int(NOW)))
    assert (problem.status, problem.reason) == (400, f"header.{field} is missing")


def test_an_event_without_a_header_is_400() -> None:
    body = {"schema": "2.0", "event": {}}
    problem = refused(*seal(body, SEALED, timestamp=int(NOW)))
    assert (problem.status, problem.reason) == (400, "event without a header object")


# --- refused: the token -----------------------------------------------------------------


@pytest.mark.parametrize("secrets", [SEALED, PLAIN], ids=["sealed", "plain"])
@pytest.mark.parametrize("token", ["vt_wrong", ""], ids=["wrong", "empty"])
def test_an_event_with_another_token_is_401(secrets: LarkSecrets, token: str) -> None:
    problem = refused(*seal(mention(token=token), secrets, timestamp=int(NOW)), secrets)
    assert problem.status == 401
    assert "verification token" in problem.reason


def test_a_card_press_with_another_token_is_401() -> None:
    problem = refused(*seal(press(token="vt_wrong"), SEALED, timestamp=int(NOW)))
    assert (problem.status, problem.reason) == (401, "verification token does not match")


@pytest.mark.parametrize("secrets", [SEALED, PLAIN], ids=["sealed", "plain"])
def test_a_url_check_with_another_token_is_401(secrets: LarkSecrets) -> None:
    raw, _ = seal(url_verification("vt_wrong", "ch-1"), secrets, timestamp=int(NOW))
    problem = refused(raw, {}, secrets)
    assert (problem.status, problem.reason) == (401, "verification token does not match")


def test_a_url_check_without_a_challenge_is_400() -> None:
    body = {"token": TOKEN, "type": "url_verification"}
    problem = refused(seal(body, SEALED, timestamp=int(NOW))[0], {})
    assert problem.status == 400


# --- refused: the signature and the replay window ---------------------------------------


@pytest.mark.parametrize(
    "header", ["X-Lark-Request-Timestamp", "X-Lark-Request-Nonce", "X-Lark-Signature"]
)
def test_an_unsigned_event_is_401(header: str) -> None:
    raw, headers = seal(mention(), SEALED, timestamp=int(NOW))
    del headers[header]
    problem = refused(raw, headers)
    assert (problem.status, problem.reason) == (401, f"unsigned request: {header} missing")


def test_an_altered_body_fails_the_signature() -> None:
    _, headers = seal(mention(), SEALED, timestamp=int(NOW))
    other, _ = seal(mention(event_id="ev_forged"), SEALED, timestamp=int(NOW))
    problem = refused(other, headers)
    assert (problem.status, problem.reason) == (401, "signature does not match")


@pytest.mark.parametrize("changed", ["X-Lark-Request-Timestamp", "X-Lark-Request-Nonce"])
def test_altered_signed_headers_fail_the_signature(changed: str) -> None:
    raw, headers = seal(mention(), SEALED, timestamp=int(NOW))
    headers[changed] = str(int(NOW) + 1) if "Timestamp" in changed else "other-nonce"
    problem = refused(raw, headers)
    assert (problem.status, problem.reason) == (401, "signature does not match")


def test_a_signature_made_with_another_key_fails() -> None:
    raw, headers = seal(mention(), SEALED, timestamp=int(NOW))
    headers["X-Lark-Signature"] = signature(
        raw, "ek_guess", timestamp=str(int(NOW)), nonce=headers["X-Lark-Request-Nonce"]
    )
    problem = refused(raw, headers)
    assert (problem.status, problem.reason) == (401, "signature does not match")


def test_a_replayed_old_request_is_401_saying_how_old() -> None:
    raw, headers = seal(mention(), SEALED, timestamp=int(NOW) - 912)
    problem = refused(raw, headers)
    assert (problem.status, problem.reason) == (401, "request timestamp 912 s old")


def test_a_request_from_the_future_is_401() -> None:
    raw, headers = seal(mention(), SEALED, timestamp=int(NOW) + 301)
    problem = refused(raw, headers)
    assert (problem.status, problem.reason) == (401, "request timestamp 301 s in the future")


def test_a_signed_timestamp_that_is_not_seconds_is_400() -> None:
    raw = seal(mention(), SEALED, timestamp=0)[0]
    stamp, nonce = "2026-09-01T00:00:00Z", "n1"
    headers = {
        "X-Lark-Request-Timestamp": stamp,
        "X-Lark-Request-Nonce": nonce,
        "X-Lark-Signature": signature(raw, KEY, timestamp=stamp, nonce=nonce),
    }
    problem = refused(raw, headers)
    assert problem.status == 400
    assert "not whole seconds" in problem.reason


# --- the kit against the SDK ------------------------------------------------------------


def _dispatcher(seen: list[object]) -> EventDispatcherHandler:
    def on_press(data: P2CardActionTrigger) -> P2CardActionTriggerResponse:
        seen.append(data)
        return P2CardActionTriggerResponse()

    return (
        EventDispatcherHandler.builder(KEY, TOKEN)
        .register_p2_im_message_receive_v1(seen.append)
        .register_p2_card_action_trigger(on_press)
        .build()
    )


def _sdk(raw: bytes, headers: dict[str, str], seen: list[object]) -> tuple[int, Any]:
    request = RawRequest()
    request.uri, request.body, request.headers = "/lark/events", raw, headers
    response = _dispatcher(seen).do(request)
    return response.status_code, json.loads(response.content)


def test_the_sdk_accepts_what_seal_makes() -> None:
    seen: list[object] = []
    assert _sdk(*seal(mention(), SEALED, timestamp=int(NOW)), seen)[0] == 200
    assert _sdk(*seal(press(), SEALED, timestamp=int(NOW)), seen)[0] == 200
    message, card = seen
    assert isinstance(message, P2ImMessageReceiveV1)
    assert message.event.message.message_id == "om_0000000000000000000001"
    assert isinstance(card, P2CardActionTrigger)
    assert card.event.action.value == {"action": "mute", "repo": "acme/api"}
    raw, _ = seal(url_verification(TOKEN, "ch-sdk"), SEALED, timestamp=int(NOW))
    assert _sdk(raw, {}, seen) == (200, {"challenge": "ch-sdk"})


def test_the_sdk_refuses_what_open_callback_refuses() -> None:
    raw, headers = seal(mention(), SEALED, timestamp=int(NOW))
    headers["X-Lark-Request-Nonce"] = "other-nonce"
    seen: list[object] = []
    assert _sdk(raw, headers, seen)[0] == 500  # the SDK answers every failure with 500
    assert seen == []
    assert refused(raw, headers).reason == "signature does not match"


def test_the_message_builder_gives_the_sdk_models_fields() -> None:
    body = message_event(
        token=TOKEN,
        event_id="ev_0003",
        chat_id="oc_dm0000000000000000000001",
        chat_type="p2p",
        sender_open_id=ALICE,
        text="@_user_1 7422 风险",
        mentions=[("@_user_1", BOT, "prdigest")],
        message_id="om_0000000000000000000003",
        root_id="om_root",
        parent_id="om_parent",
        create_time_ms=1_788_000_123_456,
    )
    data = JSON.unmarshal(json.dumps(body), P2ImMessageReceiveV1)
    assert (data.schema, data.header.event_id, data.header.token) == ("2.0", "ev_0003", TOKEN)
    assert data.header.event_type == "im.message.receive_v1"
    assert data.event.sender.sender_id.open_id == ALICE
    assert data.event.sender.sender_type == "user"
    message = data.event.message
    assert (message.chat_id, message.chat_type) == ("oc_dm0000000000000000000001", "p2p")
    assert (message.root_id, message.parent_id) == ("om_root", "om_parent")
    assert (message.message_type, message.create_time) == ("text", "1788000123456")
    assert json.loads(message.content) == {"text": "@_user_1 7422 风险"}
    (mentioned,) = message.mentions
    assert (mentioned.key, mentioned.id.open_id, mentioned.name) == ("@_user_1", BOT, "prdigest")
    assert mentioned.id.union_id.startswith("on_")
    assert mentioned.tenant_key == data.header.tenant_key


def test_a_message_without_replies_or_mentions_leaves_those_fields_out() -> None:
    body = message_event(
        token=TOKEN,
        event_id="ev_0004",
        chat_id=GROUP,
        chat_type="group",
        sender_open_id=ALICE,
        text="hello",
        message_id="om_0000000000000000000004",
    )
    message = JSON.unmarshal(json.dumps(body), P2ImMessageReceiveV1).event.message
    assert (message.root_id, message.parent_id, message.mentions) == (None, None, None)


def test_the_card_builder_gives_the_sdk_models_fields() -> None:
    body = card_action_event(
        token=TOKEN,
        event_id="ev_0005",
        operator_open_id=ALICE,
        chat_id=GROUP,
        message_id="om_0000000000000000000005",
        value={"action": "pick"},
        tag="select_static",
        option="weekly",
    )
    data = JSON.unmarshal(json.dumps(body), P2CardActionTrigger)
    assert (data.header.event_type, data.header.token) == ("card.action.trigger", TOKEN)
    event = data.event
    assert (event.operator.open_id, event.host) == (ALICE, "im_message")
    assert event.token.startswith("c-")
    action = event.action
    assert action.value == {"action": "pick"}
    assert (action.tag, action.option) == ("select_static", "weekly")
    context = event.context
    assert (context.open_message_id, context.open_chat_id) == ("om_0000000000000000000005", GROUP)
