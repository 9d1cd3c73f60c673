"""A JSON column stores text as UTF-8 (a Chinese character is three bytes, not a six-character
escape) on both backends and reads back what was written, a lone surrogate included; what
orjson refuses (a lone surrogate, NaN, integers past 64 bits) json writes, as before."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import JSON, Column, Integer, MetaData, String, Table, cast, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.store.sql.db import json_text
from tests.kits.probe import engine_with

metadata = MetaData()
probe = Table(
    "json_probe",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("payload", JSON, nullable=False),
)
DIGEST = {"text": "<b>PR 摘要 · 标签视图</b>\n风险标记 13", "entities": []}


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    async with engine_with(database_url, metadata) as engine:
        yield engine


def test_what_orjson_refuses_is_written_as_json_did() -> None:
    assert json.loads(json_text({"n": 2**70, "x": float("nan")}))["n"] == 2**70


def test_chinese_is_stored_as_itself_and_a_lone_surrogate_as_an_escape() -> None:
    assert "摘要" in json_text(DIGEST) and "\\u" not in json_text(DIGEST)
    lone = {"text": "half a pair: \ud83d"}
    assert json_text(lone) == '{"text": "half a pair: \\ud83d"}'


async def test_payloads_round_trip_and_keep_their_characters(engine: AsyncEngine) -> None:
    lone = {"text": "half a pair: \ud83d ok"}
    async with engine.begin() as conn:
        rows = [{"id": 1, "payload": DIGEST}, {"id": 2, "payload": lone}]
        await conn.execute(probe.insert(), rows)
    async with engine.connect() as conn:
        payloads = (await conn.execute(select(probe.c.payload).order_by(probe.c.id))).scalars()
        assert list(payloads) == [DIGEST, lone]
        stored = select(cast(probe.c.payload, String)).where(probe.c.id == 1)
        text = (await conn.execute(stored)).scalar_one()
    assert "摘要" in text and "\\u6458" not in text
