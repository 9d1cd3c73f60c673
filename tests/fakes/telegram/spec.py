"""The Bot API spec (`tests/specs/telegram/bot-api.json`) as the fake uses it.

- decode request parameters the way the real API does: form values are strings, and fields whose
  type is an object or an array arrive as JSON strings; JSON bodies arrive already typed;
- refuse a value of the wrong type, an object missing a required field, a malformed JSON field;
- record (not refuse) unknown fields, since the real API ignores them;
- build response objects that carry every field the spec marks required, so PTB can read them.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.kits.paths import SPECS

DEFAULT_SPEC_PATH = SPECS / "telegram" / "bot-api.json"

_INTEGER = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?")
_DISCRIMINATOR = re.compile(r'(?:must be|always) "?([a-z_]+)"?')
_SCALARS = {"String", "Integer", "Float", "Boolean", "True", "InputFile"}


class BotApiError(Exception):
    """An error answer: HTTP status, `description`, optional `parameters`."""

    def __init__(
        self, status: int, description: str, parameters: dict[str, object] | None = None
    ) -> None:
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters

    def payload(self) -> dict[str, object]:
        data: dict[str, object] = {
            "ok": False,
            "error_code": self.status,
            "description": self.description,
        }
        if self.parameters:
            data["parameters"] = self.parameters
        return data


def bad_request(reason: str) -> BotApiError:
    return BotApiError(400, f"Bad Request: {reason}")


@dataclass(frozen=True)
class FileUpload:
    """A file part of a multipart request."""

    filename: str | None
    content_type: str | None
    size: int


@dataclass(frozen=True)
class FieldSpec:
    name: str
    types: tuple[str, ...]
    required: bool
    description: str = ""


@dataclass(frozen=True)
class TypeSpec:
    name: str
    fields: dict[str, FieldSpec]
    subtypes: tuple[str, ...] = ()

    def discriminator(self) -> tuple[str, str] | None:
        """(field, value) for subtypes told apart by a `type`-like field ("always "creator"")."""
        for spec in self.fields.values():
            match = _DISCRIMINATOR.search(spec.description)
            if spec.required and match and spec.types == ("String",):
                return spec.name, match.group(1)
        return None


@dataclass(frozen=True)
class MethodSpec:
    name: str
    fields: dict[str, FieldSpec]


@dataclass(frozen=True)
class BotApiSpec:
    version: str
    methods: dict[str, MethodSpec]  # keyed by lower-case name: method names are case-insensitive
    types: dict[str, TypeSpec] = field(default_factory=dict)

    def method(self, name: str) -> MethodSpec | None:
        return self.methods.get(name.lower())


def _fields(raw: list[dict[str, Any]]) -> dict[str, FieldSpec]:
    return {
        str(item["name"]): FieldSpec(
            name=str(item["name"]),
            types=tuple(str(t) for t in item["types"]),
            required=bool(item["required"]),
            description=str(item.get("description", "")),
        )
        for item in raw
    }


@functools.cache
def load_spec(path: Path = DEFAULT_SPEC_PATH) -> BotApiSpec:
    """Read the spec once per process (per path)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    methods = {
        name.lower(): MethodSpec(name, _fields(body.get("fields", [])))
        for name, body in data["methods"].items()
    }
    types = {
        name: TypeSpec(name, _fields(body.get("fields", [])), tuple(body.get("subtypes", [])))
        for name, body in data["types"].items()
    }
    return BotApiSpec(str(data["version"]), methods, types)


class ValueChecker:
    """Checks one decoded value against spec type names, collecting unknown nested fields."""

    def __init__(self, spec: BotApiSpec) -> None:
        self.spec = spec
        self.unknown: list[str] = []

    def check(self, types: tuple[str, ...], value: object, path: str) -> str | None:
        """None if `value` fits one of `types`, else the reason it fits none."""
        reasons = []
        for type_name in types:
            trial = ValueChecker(self.spec)
            reason = trial.check_one(type_name, value, path)
            if reason is None:
                self.unknown.extend(trial.unknown)
                return None
            reasons.append(reason)
        return reasons[0]

    def check_one(self, type_name: str, value: object, path: str) -> str | None:
        if type_name.startswith("Array of "):
            if not isinstance(value, list):
                return f"{path} must be an Array"
            inner = type_name.removeprefix("Array of ")
            for index, item in enumerate(value):
                reason = self.check((inner,), item, f"{path}[{index}]")
                if reason:
                    return reason
            return None
        if type_name in _SCALARS:
            return None if _scalar_fits(type_name, value) else f"{path} must be {type_name}"
        type_spec = self.spec.types.get(type_name)
        if type_spec is None:
            return f"{path}: unknown type {type_name}"
        if type_spec.subtypes:
            return self.check_subtypes(type_spec, value, path)
        return self.check_object(type_spec, value, path)

    def check_subtypes(self, type_spec: TypeSpec, value: object, path: str) -> str | None:
        candidates = []
        for name in type_spec.subtypes:
            trial = ValueChecker(self.spec)
            if trial.check_one(name, value, path) is None:
                candidates.append(trial)
        if not candidates:
            return f"{path} is not a valid {type_spec.name}"
        best = min(candidates, key=lambda trial: len(trial.unknown))
        self.unknown.extend(best.unknown)
        return None

    def check_object(self, type_spec: TypeSpec, value: object, path: str) -> str | None:
        if not isinstance(value, dict):
            return f"{path} must be a {type_spec.name} object"
        discriminator = type_spec.discriminator()
        if discriminator and value.get(discriminator[0]) != discriminator[1]:
            return f"{path}.{discriminator[0]} must be {discriminator[1]}"
        for name, spec in type_spec.fields.items():
            if name not in value:
                if spec.required:
                    return f"{path}.{name} is required"
                continue
            reason = self.check(spec.types, value[name], f"{path}.{name}")
            if reason:
                return reason
        self.unknown.extend(f"{path}.{key}" for key in value if key not in type_spec.fields)
        return None


def _scalar_fits(type_name: str, value: object) -> bool:
    if type_name == "String":
        return isinstance(value, str)
    if type_name == "Integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if type_name == "Float":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if type_name == "Boolean":
        return isinstance(value, bool)
    if type_name == "True":
        return value is True
    return isinstance(value, FileUpload | str)  # InputFile: an upload, a file_id or a URL


def decode_form_value(spec: FieldSpec, raw: str) -> object:
    """A form/query string value → the typed value the real API would see."""
    types = spec.types
    if set(types) <= {"String", "InputFile"}:
        return raw
    if "Integer" in types and _INTEGER.fullmatch(raw):
        return int(raw)
    if "Float" in types and _FLOAT.fullmatch(raw):
        return float(raw)
    if "Integer" in types and _FLOAT.fullmatch(raw) and float(raw).is_integer():
        return int(float(raw))  # PTB may send a whole number of seconds as "10.0"
    if "Boolean" in types or "True" in types:
        lowered = raw.lower()
        if lowered in ("true", "1"):
            return True
        if lowered in ("false", "0"):
            return False
    if "String" in types:
        return raw  # e.g. chat_id "@channelname"
    if all(t in _SCALARS for t in types):
        raise bad_request(f'field "{spec.name}" must be of type {" or ".join(types)}')
    return _json(spec, raw)


def as_int(value: object, default: int = 0) -> int:
    """An Integer parameter (already checked against the spec) as an int."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str) and _INTEGER.fullmatch(value):
        return int(value)
    return default


def _json(spec: FieldSpec, raw: str) -> object:
    try:
        return json.loads(raw)
    except ValueError:
        raise bad_request(f"can't parse {spec.name} JSON object") from None


def complete(spec: BotApiSpec, type_name: str, value: dict[str, object]) -> dict[str, object]:
    """`value` plus a default for every required field it lacks (recursively)."""
    type_spec = spec.types[type_name]
    if type_spec.subtypes:
        return complete(spec, type_spec.subtypes[0], value)
    result = dict(value)
    for name, field_spec in type_spec.fields.items():
        if field_spec.required and name not in result:
            result[name] = _default(spec, field_spec.types[0])
            continue
        nested = result.get(name)
        if isinstance(nested, dict) and field_spec.types[0] in spec.types:
            result[name] = complete(spec, field_spec.types[0], nested)
    return result


def _default(spec: BotApiSpec, type_name: str) -> object:
    defaults: dict[str, object] = {"String": "", "Integer": 0, "Float": 0.0, "Boolean": False}
    if type_name in defaults:
        return defaults[type_name]
    if type_name == "True":
        return True
    if type_name.startswith("Array of "):
        return []
    return complete(spec, type_name, {})


_EMPTY_FIELD = {"text": "message text is empty", "callback_query_id": "query_id is empty"}


def decode_params(
    spec: BotApiSpec, method: MethodSpec, raw: dict[str, object]
) -> tuple[dict[str, object], list[str]]:
    """(typed params, unknown field paths), or the 400 the real API answers for bad input."""
    params: dict[str, object] = {}
    unknown: list[str] = []
    for name, value in raw.items():
        field_spec = method.fields.get(name)
        if field_spec is None:
            unknown.append(name)
            params[name] = value
            continue
        if isinstance(value, str):
            value = decode_form_value(field_spec, value)
        checker = ValueChecker(spec)
        reason = checker.check(field_spec.types, value, name)
        if reason and set(field_spec.types) <= _SCALARS:
            raise bad_request(f'field "{name}" must be of type {" or ".join(field_spec.types)}')
        if reason:
            raise bad_request(f"can't parse {name}: {reason}")
        unknown.extend(checker.unknown)
        params[name] = value
    for name, field_spec in method.fields.items():
        if field_spec.required and params.get(name) in (None, ""):
            raise bad_request(_EMPTY_FIELD.get(name, f"{name} is empty"))
    return params, unknown
