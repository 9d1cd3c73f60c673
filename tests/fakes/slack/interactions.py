"""What Slack POSTs to the app when a user acts: slash commands, modal submissions, button presses
and opening the Home tab, signed like Slack signs them (slack_sdk's own signer).

Each payload names only what the fake shows the user (an open view, a posted message, the
element with that action_id), and each interaction carries a fresh trigger_id the fake accepts:

    inbound = fake.interactions.view_submission(view.id, {"tags": ["breaking"]})
    await http.post("/slack/events", content=inbound.body, headers=inbound.headers(SECRET))
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qs, urlencode

from slack_sdk.signature import SignatureVerifier

from tests.fakes.slack.records import PostedMessage
from tests.fakes.slack.views import APP_ID, FakeView, Views
from tests.fakes.slack.workspace import Workspace


class FakeSlack(Protocol):
    """What the payload builders read of the fake (api.FakeSlack), named here so the fake
    and its builders do not import each other."""

    users: dict[str, dict[str, Any]]
    workspace: Workspace
    views: Views

    def issue_trigger_id(self, user: str = ...) -> str: ...

    def response_url(self, key: str = ..., channel: str = ..., user: str = ...) -> str: ...


FORM = "application/x-www-form-urlencoded"
JSON = "application/json"
# State a submission reports for each input element type: "value", one option, or a list.
TEXT_INPUTS = frozenset({"plain_text_input", "number_input", "email_text_input", "url_text_input"})
ONE_OPTION = frozenset({"static_select", "radio_buttons"})
MANY_OPTIONS = frozenset({"multi_static_select", "checkboxes"})
Choice = str | Sequence[str]


@dataclass(frozen=True)
class Inbound:
    """One request Slack would send the app: its body, content type and trigger_id."""

    body: bytes
    content_type: str
    trigger_id: str | None = None

    def headers(self, secret: str, timestamp: str | None = None) -> dict[str, str]:
        """The signature headers: `v0=` HMAC of `v0:{ts}:{body}` with the signing secret."""
        ts = timestamp if timestamp is not None else str(int(time.time()))
        signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=self.body)
        assert signature is not None
        return {
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": signature,
            "Content-Type": self.content_type,
        }

    @property
    def payload(self) -> dict[str, Any]:
        """The JSON the body carries (`payload=` form field, or the event envelope)."""
        if self.content_type == JSON:
            data = json.loads(self.body)
        else:
            fields = parse_qs(self.body.decode())
            data = json.loads(fields["payload"][0]) if "payload" in fields else fields
        assert isinstance(data, dict)
        return data


def _blocks_with(blocks: object) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(block, element) for every interactive element of a list of blocks."""
    for block in blocks if isinstance(blocks, list) else []:
        if block.get("type") == "input":
            yield block, block.get("element", {})
        elif block.get("type") == "actions":
            for element in block.get("elements", []):
                yield block, element
        elif block.get("type") == "section" and "accessory" in block:
            yield block, block["accessory"]


def _option(element: Mapping[str, Any], value: str) -> dict[str, Any]:
    options = list(element.get("options", []))
    for group in element.get("option_groups", []):
        options += group.get("options", [])
    for option in options:
        if option.get("value") == value:
            return dict(option)
    raise ValueError(f"{element.get('action_id')} has no option with value {value!r}")


def element_state(element: Mapping[str, Any], choice: Choice) -> dict[str, Any]:
    """What `view.state.values` reports for an element after the user chose `choice`."""
    kind = str(element.get("type"))
    if kind in TEXT_INPUTS:
        return {"type": kind, "value": str(choice)}
    if kind in ONE_OPTION:
        return {"type": kind, "selected_option": _option(element, str(choice))}
    if kind in MANY_OPTIONS:
        chosen = [choice] if isinstance(choice, str) else list(choice)
        return {"type": kind, "selected_options": [_option(element, v) for v in chosen]}
    raise ValueError(f"no state helper for a {kind} element")


class Interactions:
    """Payload builders bound to one fake: they read what it shows, and issue trigger_ids."""

    def __init__(self, fake: FakeSlack) -> None:
        self.fake = fake
        self._keys = itertools.count(1)

    def _user(self, user_id: str) -> dict[str, Any]:
        user = self.fake.users.get(user_id)
        if user is None:
            raise ValueError(f"no user {user_id} in the fake workspace")
        name = str(user["name"])
        return {
            "id": user_id,
            "username": name,
            "name": name,
            "team_id": self.fake.workspace.team_id,
        }

    def _team(self) -> dict[str, str]:
        return {"id": self.fake.workspace.team_id, "domain": "fake-team"}

    def _open_view(self, view_id: str) -> FakeView:
        view = self.fake.views.views.get(view_id)
        if view is None or view.closed:
            raise ValueError(f"view {view_id} is not shown to anyone")
        return view

    def _form(self, payload: dict[str, Any]) -> Inbound:
        body = urlencode({"payload": json.dumps(payload)}).encode()
        return Inbound(body, FORM, payload.get("trigger_id"))

    def slash_command(
        self, text: str, command: str = "/pr", channel: str = "C0TEST1", user: str = "U0TEST1"
    ) -> Inbound:
        """`/pr text` run by `user` in `channel`, with a live response_url and trigger_id."""
        trigger_id = self.fake.issue_trigger_id(user)
        fields = {
            "token": "legacy-verification-token",
            "team_id": self.fake.workspace.team_id,
            "team_domain": "fake-team",
            "channel_id": channel,
            "channel_name": channel.lower(),
            "user_id": user,
            "user_name": self._user(user)["name"],
            "command": command,
            "text": text,
            "api_app_id": APP_ID,
            "is_enterprise_install": "false",
            "response_url": self.fake.response_url(f"S{next(self._keys)}", channel, user),
            "trigger_id": trigger_id,
        }
        return Inbound(urlencode(fields).encode(), FORM, trigger_id)

    def view_submission(self, view_id: str, choices: Mapping[str, Choice]) -> Inbound:
        """The user pressed Submit on an open modal after choosing `choices`, keyed by the
        block_id of each input block (the element's state is built from its options)."""
        view = self._open_view(view_id)
        inputs = {
            str(block.get("block_id")): element
            for block, element in _blocks_with(view.current.get("blocks"))
            if block.get("type") == "input"
        }
        values: dict[str, dict[str, Any]] = {}
        for block_id, choice in choices.items():
            if block_id not in inputs:
                raise ValueError(f"the modal has no input block {block_id!r}: {sorted(inputs)}")
            element = inputs[block_id]
            values[block_id] = {str(element.get("action_id")): element_state(element, choice)}
        shown = self.fake.views.view_json(view)
        shown["state"] = {"values": values}
        payload = {
            "type": "view_submission",
            "team": self._team(),
            "user": self._user(view.user),
            "api_app_id": APP_ID,
            "token": "legacy-verification-token",
            "trigger_id": self.fake.issue_trigger_id(view.user),
            "view": shown,
            "response_urls": [],
            "is_enterprise_install": False,
        }
        return self._form(payload)

    def _action(self, blocks: object, action_id: str, choice: Choice | None) -> dict[str, Any]:
        for block, element in _blocks_with(blocks):
            if element.get("action_id") != action_id:
                continue
            action: dict[str, Any] = {
                "type": element.get("type"),
                "action_id": action_id,
                "block_id": block.get("block_id", ""),
                "action_ts": f"{time.time():.6f}",
            }
            if element.get("type") == "button":
                action["text"] = element.get("text")
                if "value" in element:
                    action["value"] = element["value"]
            elif choice is not None:
                action.update(element_state(element, choice))
            return action
        raise ValueError(f"nothing with action_id {action_id!r} is shown there")

    def block_actions(
        self,
        action_id: str,
        *,
        user: str = "U0TEST1",
        message: PostedMessage | None = None,
        view_id: str | None = None,
        choice: Choice | None = None,
    ) -> Inbound:
        """`user` pressed (or chose `choice` in) the element `action_id` of a posted message or
        of a view (modal or Home tab) the fake shows."""
        payload: dict[str, Any] = {
            "type": "block_actions",
            "user": self._user(user),
            "api_app_id": APP_ID,
            "token": "legacy-verification-token",
            "trigger_id": self.fake.issue_trigger_id(user),
            "team": self._team(),
            "is_enterprise_install": False,
        }
        if message is not None:
            payload.update(self._message_container(message, user))
            blocks: object = message.blocks
        elif view_id is not None:
            view = self._open_view(view_id)
            payload["container"] = {"type": "view", "view_id": view.id}
            payload["view"] = self.fake.views.view_json(view)
            blocks = view.current.get("blocks")
        else:
            raise ValueError("an action happens on a message or a view")
        payload["actions"] = [self._action(blocks, action_id, choice)]
        return self._form(payload)

    def _message_container(self, message: PostedMessage, user: str) -> dict[str, Any]:
        key = f"A{next(self._keys)}"
        return {
            "container": {
                "type": "message",
                "message_ts": message.ts,
                "channel_id": message.channel,
                "is_ephemeral": message.method != "chat.postMessage",
            },
            "channel": {"id": message.channel, "name": message.channel.lower()},
            "message": {"type": "message", "ts": message.ts, "text": message.text or ""},
            "response_url": self.fake.response_url(key, message.channel, user),
        }

    def app_home_opened(self, user: str = "U0TEST1", tab: str = "home") -> Inbound:
        """The `app_home_opened` event envelope: `user` opened the app's Home (or Messages) tab."""
        self._user(user)
        event: dict[str, Any] = {
            "type": "app_home_opened",
            "user": user,
            "channel": f"D{user.removeprefix('U')}",
            "tab": tab,
            "event_ts": f"{time.time():.6f}",
        }
        home = self.fake.views.home_of(user)
        if tab == "home" and home is not None:
            event["view"] = self.fake.views.view_json(home)
        envelope = {
            "token": "legacy-verification-token",
            "team_id": self.fake.workspace.team_id,
            "api_app_id": APP_ID,
            "event": event,
            "type": "event_callback",
            "event_id": f"Ev{next(self._keys):08d}",
            "event_time": int(time.time()),
            "authorizations": [
                {
                    "team_id": self.fake.workspace.team_id,
                    "user_id": self.fake.workspace.bot_user_id,
                    "is_bot": True,
                }
            ],
            "is_ext_shared_channel": False,
        }
        return Inbound(json.dumps(envelope).encode(), JSON)
