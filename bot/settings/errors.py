"""Config validation errors as a person reads them, one line per problem.

- Paths name a channel by its name: `channels.verl-daily.schedule`, never `channels.0.schedule`
  (a list item without a unique name keeps its index: `sources.0.url`).
- An unknown key gets a did-you-mean from the keys allowed where it stands (`tag` → `tags`).
- A key that belongs in the environment (`slack.bot_token`) names its variable: secrets come from
  SLACK_BOT_TOKEN, never from the YAML file.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Mapping, Sequence, Set
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

# pydantic's prefixes of a validator's own message: the message alone says it.
_PREFIXES = ("Value error, ", "Assertion failed, ")
# Names a person may give a secret in the YAML, besides the ones derived from Env's fields.
_ALIASES = {"slack.token": "slack_bot_token", "telegram.token": "telegram_bot_token"}


class ConfigError(Exception):
    """The configuration or environment is invalid; the message names the key and the reason."""


def env_keys(env_vars: Mapping[str, str]) -> dict[str, str]:
    """YAML paths that mean an environment variable: `slack_bot_token`, `slack.bot_token` and
    `bot_ingest_token`-style spellings of each Env field → its variable."""
    keys: dict[str, str] = {}
    for field, var in env_vars.items():
        keys[field] = keys[var.lower()] = var
        platform, _, rest = field.partition("_")
        if platform in ("slack", "telegram"):
            keys[f"{platform}.{rest}"] = var
    for alias, field in _ALIASES.items():
        keys[alias] = env_vars[field]
    return keys


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if inspect.isclass(annotation) and not get_args(annotation):
        return annotation if issubclass(annotation, BaseModel) else None
    for arg in get_args(annotation):
        if (found := _model_in(arg)) is not None:
            return found
    return None


def _model_at(root: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    model = root
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        found = _model_in(field.annotation) if field is not None else None
        if found is None:
            return None
        model = found
    return model


def _item_name(items: object, index: int) -> str | None:
    """The `name` of list item `index` when it has one no other item shares."""
    if not isinstance(items, list) or not 0 <= index < len(items):
        return None
    names = [item.get("name") if isinstance(item, dict) else None for item in items]
    name = names[index]
    if isinstance(name, str) and name and names.count(name) == 1:
        return name
    return None


def readable_path(data: object, loc: Sequence[str | int]) -> str:
    """`channels.verl-daily.schedule` for loc ("channels", 0, "schedule")."""
    parts: list[str] = []
    node = data
    for part in loc:
        shown = str(part)
        if isinstance(part, int):
            shown = _item_name(node, part) or shown
            node = node[part] if isinstance(node, list) and 0 <= part < len(node) else None
        else:
            node = node.get(part) if isinstance(node, dict) else None
        parts.append(shown)
    return ".".join(parts) or "(top level)"


def _unknown_key(
    root: type[BaseModel], loc: Sequence[str | int], env: Mapping[str, str], secrets: Set[str]
) -> str:
    key = str(loc[-1])
    plain = ".".join(str(p) for p in loc if not isinstance(p, int))
    if (var := env.get(plain)) is not None:
        if var in secrets:
            return f"secrets come from {var} in the environment, never from the config file"
        return f"not a config key: set {var} in the environment"
    model = _model_at(root, loc[:-1])
    known = sorted(model.model_fields) if model is not None else []
    close = difflib.get_close_matches(key, known, n=1)
    if close:
        return f"unknown key; did you mean {close[0]!r}?"
    return f"unknown key (allowed here: {', '.join(known)})" if known else "unknown key"


def describe_config_error(
    exc: ValidationError,
    where: str,
    data: object,
    root: type[BaseModel],
    env_vars: Mapping[str, str],
    secrets: Set[str],
) -> str:
    """`invalid config PATH:` and one `  key.path: reason` line per error."""
    env = env_keys(env_vars)
    lines = [f"invalid {where}:"]
    for error in exc.errors():
        loc = list(error["loc"])
        if error["type"] == "extra_forbidden":
            message = _unknown_key(root, loc, env, secrets)
        else:
            message = error["msg"]
            for prefix in _PREFIXES:
                message = message.removeprefix(prefix)
        lines.append(f"  {readable_path(data, loc)}: {message}")
    return "\n".join(lines)
