"""Opening a Feishu/Lark HTTP callback: decryption, the challenge, token, signature and replay.

Feishu POSTs events (messages that @mention the bot) and callbacks (card buttons) to one URL.
`open_callback` turns the raw request into a `Challenge` (the URL check the developer console
sends when the address is saved) or an `Envelope` (a v2 event), or refuses it with the reason
and the HTTP status to answer. It is pure: the caller passes the clock and the secrets.

What is checked, and why:
- The body is at most MAX_BODY_BYTES of JSON holding an object, so nothing else is parsed.
- With an Encrypt Key, Feishu encrypts every body (AES-256-CBC, key sha256(encrypt_key), IV
  first, PKCS7, base64: the SDK's AESCipher) and signs every event with
  sha256(timestamp + nonce + encrypt_key + raw body) in X-Lark-Signature. A plain body then is
  a forgery. The signature proves the sender knows the key (CBC alone authenticates nothing),
  and its timestamp must lie within REPLAY_WINDOW_SECONDS of now, so a captured request cannot
  be played again later; Feishu's own retries carry a fresh timestamp and pass.
- The URL check (type url_verification) is not signed (Feishu's docs exclude it from
  signature checks, and the SDK skips it): its token must match and, with a key, it must be
  encrypted.
- The Verification Token, when set, must equal the token the body carries (compared in
  constant time). Only schema 2.0 events are read; each must name its event_id and event_type.

Without an Encrypt Key nothing is signed: only the token and the adapter's event_id dedupe
protect the endpoint, and a captured request can be replayed after the dedupe forgets it
(check-config warns about this setup).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lark_oapi.core.const import (
    LARK_REQUEST_NONCE,
    LARK_REQUEST_SIGNATURE,
    LARK_REQUEST_TIMESTAMP,
)
from lark_oapi.core.utils import AESCipher

REPLAY_WINDOW_SECONDS = 300.0
# Feishu's events are a few KiB; a card form's values stay far below this.
MAX_BODY_BYTES = 1024 * 1024
URL_VERIFICATION = "url_verification"
SCHEMA_V2 = "2.0"


@dataclass(frozen=True, slots=True)
class LarkSecrets:
    verification_token: str | None  # LARK_VERIFICATION_TOKEN
    encrypt_key: str | None  # LARK_ENCRYPT_KEY


class CallbackRefused(Exception):
    """A request that is not Feishu's, or not readable: answered with `status`, logged with
    `reason`. 400 for a malformed body, 401 for a wrong token, signature or timestamp."""

    def __init__(self, reason: str, status: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


@dataclass(frozen=True, slots=True)
class Challenge:
    challenge: str  # answered as {"challenge": ...}


@dataclass(frozen=True, slots=True)
class Envelope:
    body: dict[str, Any]  # the decrypted v2 JSON: {"schema": "2.0", "header": ..., "event": ...}
    event_id: str
    event_type: str  # header.event_type: "im.message.receive_v1", "card.action.trigger", ...


def open_callback(
    raw: bytes, headers: Mapping[str, str], secrets: LarkSecrets, now: float
) -> Challenge | Envelope:
    """The challenge or the event that `raw` holds; CallbackRefused when it is not Feishu's."""
    if len(raw) > MAX_BODY_BYTES:
        raise CallbackRefused(f"body of {len(raw)} bytes exceeds {MAX_BODY_BYTES}", 400)
    plain = _plaintext(_json_object(raw, "request body"), secrets)
    if plain.get("type") == URL_VERIFICATION:
        return _challenge(plain, secrets)
    if secrets.encrypt_key:
        _check_signature(raw, headers, secrets.encrypt_key, now)
    return _envelope(plain, secrets)


def _json_object(data: bytes | str, what: str) -> dict[str, Any]:
    """`data` parsed as a JSON object."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
        raise CallbackRefused(f"{what} is not JSON: {e}", 400) from None
    if not isinstance(value, dict):
        raise CallbackRefused(f"{what} is a JSON {type(value).__name__}, not an object", 400)
    return value


def _plaintext(body: dict[str, Any], secrets: LarkSecrets) -> dict[str, Any]:
    """The body itself, or the object its `encrypt` field holds."""
    if "encrypt" not in body:
        if secrets.encrypt_key:
            # Feishu encrypts every request once a key is set: a plain one is forged.
            raise CallbackRefused("plain body but LARK_ENCRYPT_KEY is set", 401)
        return body
    if not secrets.encrypt_key:
        raise CallbackRefused("encrypted event but LARK_ENCRYPT_KEY is not set", 401)
    sealed = body["encrypt"]
    if not isinstance(sealed, str):
        raise CallbackRefused("encrypt is not a string", 400)
    try:
        ciphertext = base64.b64decode(sealed, validate=True)
        text = AESCipher(secrets.encrypt_key).decrypt(ciphertext).decode("utf-8")
    except (binascii.Error, ValueError) as e:
        raise CallbackRefused(f"encrypted body does not decrypt: {e}", 400) from None
    return _json_object(text, "decrypted body")


def _check_token(carried: Any, secrets: LarkSecrets) -> None:
    """The carried token equals LARK_VERIFICATION_TOKEN, when that is set."""
    expected = secrets.verification_token
    if not expected:
        return
    if not isinstance(carried, str) or not carried:
        raise CallbackRefused("verification token is missing", 401)
    if not hmac.compare_digest(carried.encode(), expected.encode()):
        raise CallbackRefused("verification token does not match", 401)


def _challenge(plain: dict[str, Any], secrets: LarkSecrets) -> Challenge:
    """The URL check: its token matches and it names a challenge to echo."""
    _check_token(plain.get("token"), secrets)
    challenge = plain.get("challenge")
    if not isinstance(challenge, str) or not challenge:
        raise CallbackRefused("url_verification without a challenge", 400)
    return Challenge(challenge)


def _check_signature(raw: bytes, headers: Mapping[str, str], key: str, now: float) -> None:
    """X-Lark-Signature is Feishu's over this very body, made within the replay window."""
    lowered = {name.lower(): value for name, value in headers.items()}
    names = (LARK_REQUEST_TIMESTAMP, LARK_REQUEST_NONCE, LARK_REQUEST_SIGNATURE)
    missing = [name for name in names if not lowered.get(name.lower())]
    if missing:
        raise CallbackRefused(f"unsigned request: {', '.join(missing)} missing", 401)
    timestamp, nonce, signature = (lowered[name.lower()] for name in names)
    signed = (timestamp + nonce + key).encode() + raw
    if not hmac.compare_digest(signature.encode(), hashlib.sha256(signed).hexdigest().encode()):
        raise CallbackRefused("signature does not match", 401)
    try:
        sent = int(timestamp)
    except ValueError:
        raise CallbackRefused(
            f"request timestamp {timestamp!r} is not whole seconds", 400
        ) from None
    age = now - sent
    if age > REPLAY_WINDOW_SECONDS:
        raise CallbackRefused(f"request timestamp {age:.0f} s old", 401)
    if age < -REPLAY_WINDOW_SECONDS:
        raise CallbackRefused(f"request timestamp {-age:.0f} s in the future", 401)


def _envelope(plain: dict[str, Any], secrets: LarkSecrets) -> Envelope:
    """A v2 event whose header carries the right token, its event_id and its event_type."""
    if plain.get("schema") != SCHEMA_V2:
        raise CallbackRefused(
            f"schema {plain.get('schema')!r}: only 2.0 events are read (subscribe to v2.0)", 400
        )
    header = plain.get("header")
    if not isinstance(header, dict):
        raise CallbackRefused("event without a header object", 400)
    _check_token(header.get("token"), secrets)
    event_id = header.get("event_id")
    event_type = header.get("event_type")
    if not isinstance(event_id, str) or not event_id:
        raise CallbackRefused("header.event_id is missing", 400)
    if not isinstance(event_type, str) or not event_type:
        raise CallbackRefused("header.event_type is missing", 400)
    return Envelope(plain, event_id, event_type)
