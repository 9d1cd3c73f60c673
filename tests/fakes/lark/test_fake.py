"""The Feishu fake refuses what Feishu refuses and answers what the SDK's models read."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from lark_oapi.api.im.v1.model.create_message_response import CreateMessageResponse

from tests.fakes.lark.api import MESSAGES_PATH, TOKEN_PATH, FakeLark

CHAT = "oc_fakechat01"
CARD = {"elements": [{"tag": "div", "text": {"tag": "lark_md", "content": "hi"}}]}


@pytest.fixture
async def fake() -> AsyncIterator[FakeLark]:
    async with FakeLark() as server:
        server.add_chat(CHAT)
        yield server


async def _token(client: httpx.AsyncClient, fake: FakeLark) -> str:
    answer = await client.post(
        fake.url + TOKEN_PATH, json={"app_id": fake.app_id, "app_secret": fake.app_secret}
    )
    return str(answer.json()["tenant_access_token"])


async def _send(fake: FakeLark, body: dict[str, Any], **extra: str) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        token = await _token(client, fake)
        fields = {"receive_id": CHAT, "msg_type": "interactive", **body}
        return await client.post(
            fake.url + MESSAGES_PATH,
            params={"receive_id_type": "chat_id", **extra},
            json=fields,
            headers={"Authorization": f"Bearer {token}"},
        )


async def test_a_card_is_answered_in_the_shape_the_sdk_reads(fake: FakeLark) -> None:
    answer = await _send(fake, {"content": json.dumps(CARD)})
    parsed = CreateMessageResponse(answer.json())
    assert parsed.success() and parsed.data.message_id == fake.posted[0].message_id
    assert parsed.data.chat_id == CHAT


async def test_a_field_the_sdk_model_lacks_is_refused(fake: FakeLark) -> None:
    answer = await _send(fake, {"content": json.dumps(CARD), "card": CARD})
    assert answer.status_code == 400 and fake.posted == []
    unknown_query = await _send(fake, {"content": json.dumps(CARD)}, user_id_type="open_id")
    assert unknown_query.status_code == 400


@pytest.mark.parametrize(
    "element",
    [
        {"tag": "div", "text": {"tag": "lark_md", "content": "<at id=all></at>"}},
        {"tag": "div", "text": {"tag": "lark_md", "content": "[x](javascript:alert)"}},
        {"tag": "table", "rows": []},
        {"tag": "action", "actions": [{"tag": "div"}]},
        {"tag": "div", "text": {"tag": "lark_md", "content": "x" * 31_000}},
    ],
)
async def test_a_card_feishu_would_refuse_is_refused(
    fake: FakeLark, element: dict[str, Any]
) -> None:
    answer = await _send(fake, {"content": json.dumps({"elements": [element]})})
    assert answer.json()["code"] == 230099 and fake.posted == []


async def test_a_repeated_uuid_posts_once_and_answers_the_same_message(fake: FakeLark) -> None:
    first = await _send(fake, {"content": json.dumps(CARD), "uuid": "prdigest-1@1.0"})
    again = await _send(fake, {"content": json.dumps(CARD), "uuid": "prdigest-1@1.0"})
    assert first.json()["data"]["message_id"] == again.json()["data"]["message_id"]
    assert len(fake.posted) == 1


async def test_six_messages_in_a_second_to_one_chat_meet_the_group_limit() -> None:
    async with FakeLark(clock=lambda: 100.0) as fake:  # every request within the same second
        fake.add_chat(CHAT)
        answers = [await _send(fake, {"content": json.dumps(CARD)}) for _ in range(6)]
    codes = [answer.json()["code"] for answer in answers]
    assert codes[:5] == [0] * 5 and codes[5] == 230020


async def test_the_apps_limit_answers_429_with_the_reset_header() -> None:
    now = [100.0]
    async with FakeLark(clock=lambda: now[0]) as fake:
        for n in range(50):
            fake.add_chat(f"oc_fakechat{n:02}")
        async with httpx.AsyncClient() as client:
            token = await _token(client, fake)
            answers = [
                await client.post(
                    fake.url + MESSAGES_PATH,
                    params={"receive_id_type": "chat_id"},
                    json={
                        "receive_id": f"oc_fakechat{n % 50:02}",
                        "msg_type": "interactive",
                        "content": json.dumps(CARD),
                    },
                    headers={"Authorization": f"Bearer {token}"},
                )
                for n in range(51)
            ]
    assert [a.status_code for a in answers[:50]] == [200] * 50
    assert answers[50].status_code == 429 and answers[50].json()["code"] == 99991400
    assert answers[50].headers["x-ogw-ratelimit-reset"] == "2"


async def test_a_send_without_a_valid_token_is_refused(fake: FakeLark) -> None:
    async with httpx.AsyncClient() as client:
        answer = await client.post(
            fake.url + MESSAGES_PATH,
            params={"receive_id_type": "chat_id"},
            json={"receive_id": CHAT, "msg_type": "interactive", "content": json.dumps(CARD)},
            headers={"Authorization": "Bearer t-forged"},
        )
    assert answer.json()["code"] == 99991663 and fake.posted == []
