"""Secrets in the environment that cannot be right, found before `prdigest run` tries them.

A value left from an example (`xoxb-replace-me`, `<token>`, `changeme`, `xoxb-xxxx-xxxx`), a
token in the other token's variable (Slack's `xapp-` app-level token in SLACK_BOT_TOKEN), a
Telegram token not shaped `digits:chars`, a webhook secret Telegram would refuse. Messages name
the variable and where the right value comes from, and never echo the value.
"""

from __future__ import annotations

import re

from pydantic import SecretStr

from bot.settings import TELEGRAM_WEBHOOK_SECRET_RULE, BotConfig, Env
from bot.settings.lark import LARK_APP_ID_SHAPE, LarkReceive

SLACK_BOT_PREFIX = "xoxb-"
SLACK_APP_PREFIX = "xapp-"
TELEGRAM_TOKEN_SHAPE = re.compile(r"\d+:[A-Za-z0-9_-]+")
_PLACEHOLDER_WORDS = (
    "replace-me",
    "replace_me",
    "replaceme",
    "replace-with",
    "changeme",
    "change-me",
    "change_me",
    "placeholder",
    "your-token",
    "your_token",
    "${",
    "...",
    "…",
)
_ANGLE = re.compile(r"<[^<>]*>")
_SEGMENT_SPLIT = re.compile(r"[-:_.]")
# Where each secret's real value comes from, for the message.
WHERE = {
    "SLACK_BOT_TOKEN": "the Bot User OAuth Token (xoxb-…) on the Slack app's OAuth & Permissions "
    "page",
    "SLACK_SIGNING_SECRET": "the Signing Secret on the Slack app's Basic Information page",
    "SLACK_APP_TOKEN": "an App-Level Token (xapp-…) on the Slack app's Basic Information page",
    "TELEGRAM_BOT_TOKEN": "the token @BotFather gave (123456789:AA…)",
    "TELEGRAM_WEBHOOK_SECRET": "1-256 characters of A-Z a-z 0-9 _ -, e.g. `openssl rand -hex 32`",
    "BOT_INGEST_TOKEN": "a random token, e.g. `openssl rand -hex 32`",
    "LARK_APP_ID": "the App ID (cli_…) on the app's Credentials & Basic Info page",
    "LARK_APP_SECRET": "the App Secret on the app's Credentials & Basic Info page",
    "LARK_VERIFICATION_TOKEN": "the Verification Token on the app's Events & Callbacks page",
    "LARK_ENCRYPT_KEY": "the Encrypt Key on the app's Events & Callbacks page",
}


def is_placeholder(value: str) -> bool:
    """An example's stand-in, not a secret: `xoxb-replace-me`, `<token>`, `changeme`,
    `xoxb-xxxx-xxxx`. A real token never holds these (a run of x is a placeholder only as a
    whole piece between separators, so a random token that happens to hold `xxx` passes)."""
    lowered = value.lower()
    if any(word in lowered for word in _PLACEHOLDER_WORDS) or _ANGLE.search(value):
        return True
    return any(len(p) >= 3 and set(p) == {"x"} for p in _SEGMENT_SPLIT.split(lowered))


def _placeholder(var: str) -> str:
    return f"{var} is a placeholder, not a secret: set {WHERE[var]}"


def _value(secret: SecretStr | None) -> str | None:
    return secret.get_secret_value() if secret is not None else None


def _slack_token(var: str, value: str, prefix: str, other_var: str, other_kind: str) -> list[str]:
    """What is wrong with a Slack token of `var` (whose tokens start with `prefix`): a
    placeholder, the other variable's kind of token, or no `prefix` at all."""
    other_prefix = SLACK_APP_PREFIX if prefix == SLACK_BOT_PREFIX else SLACK_BOT_PREFIX
    article = "an" if other_prefix == SLACK_APP_PREFIX else "the"
    if is_placeholder(value):
        return [_placeholder(var)]
    if value.startswith(other_prefix):
        return [
            f"{var} holds {other_kind} ({other_prefix}…): it takes {WHERE[var]}; "
            f"{article} {other_prefix} token belongs in {other_var}"
        ]
    if not value.startswith(prefix):
        return [f"{var} does not start with {prefix}: set {WHERE[var]}"]
    return []


def slack_problems(env: Env) -> list[str]:
    """Why the Slack adapter cannot run as the environment stands (empty: it can, or is off)."""
    bot, app = _value(env.slack_bot_token), _value(env.slack_app_token)
    signing = _value(env.slack_signing_secret)
    found: list[str] = []
    if bot is not None:
        found += _slack_token(
            "SLACK_BOT_TOKEN", bot, SLACK_BOT_PREFIX, "SLACK_APP_TOKEN", "an app-level token"
        )
        if app is None and signing is None:
            found.append(
                "SLACK_BOT_TOKEN is set but neither SLACK_SIGNING_SECRET nor SLACK_APP_TOKEN"
            )
    if app is not None:
        found += _slack_token(
            "SLACK_APP_TOKEN", app, SLACK_APP_PREFIX, "SLACK_BOT_TOKEN", "a bot token"
        )
    if signing is not None and is_placeholder(signing):
        found.append(_placeholder("SLACK_SIGNING_SECRET"))
    return found


def _unshaped(name: str, value: str | None, shape: re.Pattern[str], what: str) -> list[str]:
    """Why a set secret is not one: still the example's placeholder, or not shaped like `what`."""
    if value is None:
        return []
    if is_placeholder(value):
        return [_placeholder(name)]
    if not shape.fullmatch(value):
        return [f"{name} is not shaped like {what}: set {WHERE[name]}"]
    return []


def telegram_problems(env: Env, config: BotConfig) -> list[str]:
    """Why the Telegram adapter cannot run as configured (empty: it can, or is off)."""
    token, secret = _value(env.telegram_bot_token), _value(env.telegram_webhook_secret)
    found: list[str] = []
    shape = "a Telegram token (digits, a colon, then letters, digits, _ or -)"
    found += _unshaped("TELEGRAM_BOT_TOKEN", token, TELEGRAM_TOKEN_SHAPE, shape)
    if config.telegram.webhook_url and secret is None:
        found.append("telegram.webhook_url is set but TELEGRAM_WEBHOOK_SECRET is not")
    if secret is not None:
        if is_placeholder(secret):
            found.append(_placeholder("TELEGRAM_WEBHOOK_SECRET"))
        elif not TELEGRAM_WEBHOOK_SECRET_RULE.fullmatch(secret):
            found.append("TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z a-z 0-9 _ -")
    return found


def lark_problems(env: Env, config: BotConfig) -> list[str]:
    """Why the Feishu/Lark adapter cannot run as configured (empty: it can, or is off)."""
    app_id, secret = env.lark_app_id, _value(env.lark_app_secret)
    found: list[str] = []
    if (app_id is None) != (secret is None):
        found.append("LARK_APP_ID and LARK_APP_SECRET go together: set both or neither")
    shape = "a Feishu app id (cli_ then lowercase letters and digits)"
    found += _unshaped("LARK_APP_ID", app_id, LARK_APP_ID_SHAPE, shape)
    for name, value in (
        ("LARK_APP_SECRET", secret),
        ("LARK_VERIFICATION_TOKEN", _value(env.lark_verification_token)),
        ("LARK_ENCRYPT_KEY", _value(env.lark_encrypt_key)),
    ):
        if value is not None and is_placeholder(value):
            found.append(_placeholder(name))
    webhook = env.lark_enabled and config.lark.receive is LarkReceive.WEBHOOK
    if webhook and env.lark_verification_token is None and env.lark_encrypt_key is None:
        found.append(
            "lark.receive: webhook needs LARK_ENCRYPT_KEY (or at least LARK_VERIFICATION_TOKEN):"
            " without them anyone who finds POST /lark/events can send the bot events"
        )
    return found


def lark_warnings(env: Env, config: BotConfig) -> list[str]:
    """What works but is weaker than it should be."""
    webhook = env.lark_enabled and config.lark.receive is LarkReceive.WEBHOOK
    if webhook and env.lark_verification_token is not None and env.lark_encrypt_key is None:
        return [
            "warning: LARK_ENCRYPT_KEY is not set: Feishu's callbacks arrive unencrypted and"
            " unsigned, so only the verification token guards POST /lark/events and a replayed"
            " request is refused only by its event id (set an Encrypt Key in the console)"
        ]
    return []


def ingest_problems(env: Env) -> list[str]:
    token = _value(env.ingest_token)
    return [_placeholder("BOT_INGEST_TOKEN")] if token and is_placeholder(token) else []
