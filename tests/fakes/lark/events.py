"""Feishu's inbound HTTP requests, built the way Feishu sends them.

`seal` makes the raw body and headers of one POST: with an Encrypt Key the JSON is encrypted
(AES-256-CBC, key sha256(encrypt_key), a random IV in front, PKCS7, base64, as
`{"encrypt": ...}`) and signed in X-Lark-Signature = sha256(timestamp + nonce + key + body);
without one it is plain JSON and unsigned. The builders give the documented v2 JSON of a
message that @mentions the bot (im.message.receive_v1), a card button press
(card.action.trigger) and the URL check; their field names are those of lark-oapi's models.

    raw, headers = seal(message_event(...), SECRETS, timestamp=int(now))
    envelope = open_callback(raw, headers, SECRETS, now)
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Sequence
from typing import Any

from Crypto.Cipher import AES

from bot.adapters.lark.callbacks import LarkSecrets

APP_ID = "cli_a1b2c3d4e5f6a7b8"
TENANT_KEY = "2ca1d211f64f6438"
CREATE_TIME_MS = 1_788_000_000_000  # 2026-08-29, an arbitrary fixed instant


def seal(
    body: dict[str, Any], secrets: LarkSecrets, *, timestamp: int, nonce: str = "k7Qz3mBv"
) -> tuple[bytes, dict[str, str]]:
    """The raw request body and the headers Feishu sends `body` with."""
    headers = {"Content-Type": "application/json; charset=utf-8"}
    plain = json.dumps(body, ensure_ascii=False).encode()
    key = secrets.encrypt_key
    if not key:
        return plain, headers
    raw = json.dumps({"encrypt": encrypt(plain, key)}).encode()
    headers["X-Lark-Request-Timestamp"] = str(timestamp)
    headers["X-Lark-Request-Nonce"] = nonce
    headers["X-Lark-Signature"] = signature(raw, key, timestamp=str(timestamp), nonce=nonce)
    return raw, headers


def encrypt(plain: bytes, key: str) -> str:
    """Feishu's encryption: AES-256-CBC under sha256(key), IV first, PKCS7, base64."""
    iv = os.urandom(AES.block_size)
    pad = AES.block_size - len(plain) % AES.block_size
    cipher = AES.new(hashlib.sha256(key.encode()).digest(), AES.MODE_CBC, iv)
    return base64.b64encode(iv + cipher.encrypt(plain + bytes([pad]) * pad)).decode()


def signature(raw: bytes, key: str, *, timestamp: str, nonce: str) -> str:
    """X-Lark-Signature over `raw`."""
    return hashlib.sha256((timestamp + nonce + key).encode() + raw).hexdigest()


def user_id(open_id: str) -> dict[str, str]:
    """A user's three ids, the union_id and user_id derived from the open_id."""
    digest = hashlib.sha256(open_id.encode()).hexdigest()
    return {"union_id": f"on_{digest[:32]}", "user_id": digest[:8], "open_id": open_id}


def _header(token: str, event_id: str, event_type: str, create_time_ms: int) -> dict[str, Any]:
    return {
        "event_id": event_id,
        "token": token,
        "create_time": str(create_time_ms),
        "event_type": event_type,
        "tenant_key": TENANT_KEY,
        "app_id": APP_ID,
    }


def message_event(
    *,
    token: str,
    event_id: str,
    chat_id: str,
    chat_type: str,
    sender_open_id: str,
    text: str,
    message_id: str,
    mentions: Sequence[tuple[str, str, str]] = (),
    root_id: str | None = None,
    parent_id: str | None = None,
    create_time_ms: int = CREATE_TIME_MS,
) -> dict[str, Any]:
    """im.message.receive_v1 for a text message. `text` names mentions by their keys, as
    Feishu writes them ("@_user_1 7422 风险"); `mentions` are (key, open_id, name)."""
    message: dict[str, Any] = {
        "message_id": message_id,
        "create_time": str(create_time_ms),
        "update_time": str(create_time_ms),
        "chat_id": chat_id,
        "chat_type": chat_type,
        "message_type": "text",
        "content": json.dumps({"text": text}, ensure_ascii=False),
    }
    if root_id is not None:
        message["root_id"] = root_id
    if parent_id is not None:
        message["parent_id"] = parent_id
    if mentions:
        message["mentions"] = [
            {"key": key, "id": user_id(open_id), "name": name, "tenant_key": TENANT_KEY}
            for key, open_id, name in mentions
        ]
    return {
        "schema": "2.0",
        "header": _header(token, event_id, "im.message.receive_v1", create_time_ms),
        "event": {
            "sender": {
                "sender_id": user_id(sender_open_id),
                "sender_type": "user",
                "tenant_key": TENANT_KEY,
            },
            "message": message,
        },
    }


def card_action_event(
    *,
    token: str,
    event_id: str,
    operator_open_id: str,
    chat_id: str,
    message_id: str,
    value: dict[str, Any],
    tag: str = "button",
    option: str | None = None,
    create_time_ms: int = CREATE_TIME_MS,
) -> dict[str, Any]:
    """card.action.trigger for a press on a card in a chat; `option` for a select menu."""
    action: dict[str, Any] = {"value": value, "tag": tag}
    if option is not None:
        action["option"] = option
    # The card's update token: lets the handler update the card within 30 minutes.
    update_token = "c-" + hashlib.sha256(event_id.encode()).hexdigest()[:40]
    return {
        "schema": "2.0",
        "header": _header(token, event_id, "card.action.trigger", create_time_ms),
        "event": {
            "operator": {"tenant_key": TENANT_KEY, **user_id(operator_open_id)},
            "token": update_token,
            "action": action,
            "host": "im_message",
            "context": {"open_message_id": message_id, "open_chat_id": chat_id},
        },
    }


def url_verification(token: str, challenge: str) -> dict[str, Any]:
    """The URL check the developer console sends when the request address is saved."""
    return {"challenge": challenge, "token": token, "type": "url_verification"}
