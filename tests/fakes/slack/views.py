"""Modals and Home tabs of the fake Slack: views.open, views.update, views.push, views.publish.

A modal opens only with a trigger_id the fake issued (to a payload it built) and not yet used,
within 3 seconds of the fake's clock, like Slack's. Each view is checked like Slack checks it
(title and buttons <= 24 characters, <= 100 blocks, callback_id, private_metadata, unique
external_id) and refused as `invalid_arguments` with Slack's json-pointer messages.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.slack.blocks import check_blocks
from tests.fakes.slack.mentions import UNSAFE_LINK, scan
from tests.fakes.slack.spec import SlackRefusal
from tests.fakes.slack.text_objects import BlockErrors, check_text_object

TRIGGER_LIFETIME = 3.0  # seconds a trigger_id may be exchanged for a modal
MAX_VIEW_BLOCKS = 100
MAX_VIEW_TITLE = 24  # title, submit and close labels
MAX_CALLBACK_ID = 255
MAX_PRIVATE_METADATA = 3000
MAX_EXTERNAL_ID = 255
MAX_VIEW_STACK = 3  # a modal and two pushed on top of it
APP_ID = "A0TEST"
VIEW_KEYS: Mapping[str, frozenset[str]] = {
    "modal": frozenset(
        {
            "type",
            "title",
            "blocks",
            "close",
            "submit",
            "private_metadata",
            "callback_id",
            "clear_on_close",
            "notify_on_close",
            "external_id",
            "submit_disabled",
        }
    ),
    "home": frozenset({"type", "blocks", "private_metadata", "callback_id", "external_id"}),
}


@dataclass
class FakeView:
    """A view Slack shows a user now; `versions` holds every view JSON accepted for it."""

    id: str
    user: str
    type: str
    hash: str
    versions: list[dict[str, Any]]
    root_view_id: str
    previous_view_id: str | None = None
    closed: bool = False

    @property
    def current(self) -> dict[str, Any]:
        return self.versions[-1]

    @property
    def callback_id(self) -> str:
        return str(self.current.get("callback_id", ""))

    @property
    def external_id(self) -> str:
        return str(self.current.get("external_id", ""))


@dataclass(frozen=True)
class ViewCall:
    """An accepted views.* call: what the user was shown, in order (`fake.view_calls`)."""

    method: str
    view_id: str
    user: str
    view: dict[str, Any]
    time: float


@dataclass
class Trigger:
    user: str
    issued: float
    used: bool = False


@dataclass
class Views:
    """The views and trigger_ids of one fake workspace."""

    clock: Callable[[], float]
    team_id: str
    bot_id: str
    known_user: Callable[[str], bool]
    home_enabled: bool = True
    views: dict[str, FakeView] = field(default_factory=dict)
    calls: list[ViewCall] = field(default_factory=list)
    triggers: dict[str, Trigger] = field(default_factory=dict)
    _count: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    # -- test controls ------------------------------------------------------------------------

    def issue_trigger_id(self, user: str) -> str:
        """A trigger_id as Slack puts in a payload `user` caused; one views.open may use it."""
        number = next(self._count)
        trigger_id = f"{1_000_000 + number}.{2_000_000 + number}.{number:032x}"
        self.triggers[trigger_id] = Trigger(user, self.clock())
        return trigger_id

    def views_for(self, user: str) -> list[FakeView]:
        """What `user` is shown: the Home tab and open modals, oldest first."""
        return [view for view in self.views.values() if view.user == user and not view.closed]

    def home_of(self, user: str) -> FakeView | None:
        homes = [view for view in self.views_for(user) if view.type == "home"]
        return homes[0] if homes else None

    def close(self, view_id: str) -> None:
        """The user closed (or submitted and the app cleared) a modal and the ones on top."""
        for view in self.views.values():
            if view.root_view_id == self.views[view_id].root_view_id and view.type == "modal":
                view.closed = True

    def handlers(self) -> Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        return {
            "views.open": self.open,
            "views.push": self.push,
            "views.update": self.update,
            "views.publish": self.publish,
        }

    # -- methods ------------------------------------------------------------------------------

    def open(self, params: dict[str, Any]) -> dict[str, Any]:
        view = check_view(params.get("view"), "modal")
        trigger = self._exchange(str(params["trigger_id"]))
        self._check_external_id(view, None)
        return self._answer("views.open", self._new(trigger.user, view, None))

    def push(self, params: dict[str, Any]) -> dict[str, Any]:
        view = check_view(params.get("view"), "modal")
        trigger = self._exchange(str(params["trigger_id"]))
        stack = [v for v in self.views_for(trigger.user) if v.type == "modal"]
        if not stack:
            raise SlackRefusal("not_found", "[ERROR] no modal is open to push onto")
        if len(stack) >= MAX_VIEW_STACK:
            raise SlackRefusal("push_limit_reached")
        self._check_external_id(view, None)
        return self._answer("views.push", self._new(trigger.user, view, stack[-1]))

    def update(self, params: dict[str, Any]) -> dict[str, Any]:
        if "view" not in params:
            raise SlackRefusal("invalid_arguments", "[ERROR] missing required parameter: view")
        current = self._find(params)
        view = check_view(params["view"], current.type)
        self._check_hash(current, params.get("hash"))
        self._check_external_id(view, current)
        return self._answer("views.update", self._replace(current, view))

    def publish(self, params: dict[str, Any]) -> dict[str, Any]:
        view = check_view(params.get("view"), "home")
        user = str(params["user_id"])
        if not self.known_user(user):
            raise SlackRefusal("invalid_arguments", "[ERROR] unknown user [json-pointer:/user_id]")
        if not self.home_enabled:
            raise SlackRefusal("not_enabled")
        current = self.home_of(user)
        if current is not None:
            self._check_hash(current, params.get("hash"))
        self._check_external_id(view, current)
        if current is None:
            return self._answer("views.publish", self._new(user, view, None))
        return self._answer("views.publish", self._replace(current, view))

    # -- steps --------------------------------------------------------------------------------

    def _exchange(self, trigger_id: str) -> Trigger:
        trigger = self.triggers.get(trigger_id)
        if trigger is None:
            raise SlackRefusal("invalid_trigger_id")
        if trigger.used:
            raise SlackRefusal("exchanged_trigger_id")
        if self.clock() - trigger.issued > TRIGGER_LIFETIME:
            raise SlackRefusal("expired_trigger_id")
        trigger.used = True
        return trigger

    def _find(self, params: Mapping[str, Any]) -> FakeView:
        view_id, external_id = params.get("view_id"), params.get("external_id")
        if not view_id and not external_id:
            raise SlackRefusal(
                "invalid_arguments", "[ERROR] either view_id or external_id is required"
            )
        for view in self.views.values():
            if not view.closed and (
                view.id == view_id or (external_id and view.external_id == external_id)
            ):
                return view
        raise SlackRefusal("not_found")

    @staticmethod
    def _check_hash(current: FakeView, given: object) -> None:
        if given is not None and given != "" and given != current.hash:
            raise SlackRefusal("hash_conflict")

    def _check_external_id(self, view: Mapping[str, Any], current: FakeView | None) -> None:
        external_id = view.get("external_id")
        if not external_id:
            return
        for other in self.views.values():
            if other is not current and other.external_id == external_id:
                raise SlackRefusal("duplicate_external_id")

    def _new(self, user: str, view: dict[str, Any], below: FakeView | None) -> FakeView:
        view_id = f"V{next(self._count):010d}"
        root = below.root_view_id if below else view_id
        fake_view = FakeView(view_id, user, view["type"], self._hash(), [view], root)
        fake_view.previous_view_id = below.id if below else None
        self.views[view_id] = fake_view
        return fake_view

    def _replace(self, current: FakeView, view: dict[str, Any]) -> FakeView:
        current.versions.append(view)
        current.hash = self._hash()
        return current

    def _hash(self) -> str:
        return f"{int(self.clock())}.{next(self._count):08x}"

    def _answer(self, method: str, view: FakeView) -> dict[str, Any]:
        self.calls.append(ViewCall(method, view.id, view.user, view.current, self.clock()))
        return {"ok": True, "view": self.view_json(view)}

    def view_json(self, view: FakeView) -> dict[str, Any]:
        """The view object Slack answers with, and sends back in interaction payloads."""
        sent = view.current
        return {
            "id": view.id,
            "team_id": self.team_id,
            "type": view.type,
            "blocks": sent.get("blocks", []),
            "private_metadata": sent.get("private_metadata", ""),
            "callback_id": sent.get("callback_id", ""),
            "state": {"values": {}},
            "hash": view.hash,
            "title": sent.get("title"),
            "clear_on_close": bool(sent.get("clear_on_close", False)),
            "notify_on_close": bool(sent.get("notify_on_close", False)),
            "close": sent.get("close"),
            "submit": sent.get("submit"),
            "previous_view_id": view.previous_view_id,
            "root_view_id": view.root_view_id,
            "app_id": APP_ID,
            "external_id": sent.get("external_id", ""),
            "app_installed_team_id": self.team_id,
            "bot_id": self.bot_id,
        }


def _parse_view(raw: object) -> dict[str, Any]:
    """`view` comes as a JSON string in a form post, as an object in a JSON body."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise SlackRefusal("invalid_arguments", "[ERROR] failed to parse view") from None
    if not isinstance(raw, dict):
        raise SlackRefusal("invalid_arguments", "[ERROR] must be an object [json-pointer:/view]")
    return raw


def _check_view_fields(errors: BlockErrors, view: Mapping[str, Any], kind: str) -> None:
    if kind == "modal":
        title = view.get("title")
        check_text_object(errors, title, "/view/title", MAX_VIEW_TITLE, plain_only=True)
        for button in ("submit", "close"):
            if button in view:
                where = f"/view/{button}"
                check_text_object(errors, view[button], where, MAX_VIEW_TITLE, plain_only=True)
    limits = (
        ("callback_id", MAX_CALLBACK_ID),
        ("private_metadata", MAX_PRIVATE_METADATA),
        ("external_id", MAX_EXTERNAL_ID),
    )
    for name, limit in limits:
        if name in view:
            errors.check_length(view[name], limit, f"/view/{name}", minimum=0)
    if "blocks" not in view:
        errors.fail("missing required field: blocks", "/view")


def check_view(raw: object, kind: str) -> dict[str, Any]:
    """The view JSON if Slack would take it as a `kind` view, else `invalid_arguments`."""
    view = _parse_view(raw)
    if view.get("type") != kind:
        pointer = "[json-pointer:/view/type]"
        raise SlackRefusal("invalid_arguments", f"[ERROR] must be '{kind}' {pointer}")
    errors = BlockErrors()
    errors.check_keys(view, VIEW_KEYS[kind], "/view")
    _check_view_fields(errors, view, kind)
    blocks = check_blocks(
        view.get("blocks", []), "/view/blocks", surface=kind, limit=MAX_VIEW_BLOCKS
    )
    problems = errors.messages + blocks.messages
    links = [f for f in scan(errors.pieces + blocks.pieces, set()) if f.error == UNSAFE_LINK]
    problems += [f"[ERROR] {f.reason}: {f.token} [json-pointer:{f.pointer}]" for f in links]
    if problems:
        raise SlackRefusal("invalid_arguments", *problems)
    return view
