"""Issue 16 in Telegram: `/find QUERY` (and `/search`, its alias, not in the menu), the menu
naming /find in English and Chinese, a zh user's wording, a query error's line."""

from __future__ import annotations

import json

from tests.fakes.telegram.api import FakeTelegram
from tests.kits.telegram import (
    GROUP,
    MEMBER,
    USER,
    ZH_USER,
    TelegramBot,
    push_from_zh_user,
    texts,
    until,
)

SEED_LINE = "verl-project/verl#7422 ★ [rollout] fix: preserve dummy load_format"


async def test_find_and_search_answer_alike(fake: FakeTelegram, bot: TelegramBot) -> None:
    fake.push_message(USER, "/find 权重 impact>=medium")
    fake.push_message(USER, "/search 权重 impact>=medium")
    await until(lambda: len(fake.sent_to(USER)) == 2)
    found, searched = texts(fake, USER)
    assert found == searched
    assert found.startswith("Reports matching 权重 impact>=medium:\n")
    assert SEED_LINE in found and found.endswith("(impact: medium)")


async def test_a_group_mention_finds_by_risk(fake: FakeTelegram, bot: TelegramBot) -> None:
    fake.push_message(GROUP, "@prdigest_test_bot find risk:FP8", user_id=MEMBER)
    await until(lambda: fake.sent_to(GROUP))
    [answer] = texts(fake, GROUP)
    assert answer.startswith("Reports matching risk:FP8:") and SEED_LINE in answer


async def test_a_chinese_speaking_user_reads_chinese_words(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    push_from_zh_user(fake, "/find 显存 OR 权重")
    await until(lambda: fake.sent_to(ZH_USER))
    [answer] = texts(fake, ZH_USER)
    assert answer.startswith("与「显存 OR 权重」匹配的报告：\n")
    assert answer.endswith("（影响：中）")


async def test_a_query_error_is_answered_with_its_line(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(USER, "/find rsk:FP8")
    fake.push_message(USER, "/find since:2026-13-01")
    await until(lambda: len(fake.sent_to(USER)) == 2)
    unknown, bad_date = texts(fake, USER)
    assert unknown == "query: unknown field 'rsk' at 1 (did you mean risk?)"
    assert bad_date.startswith("query: bad date '2026-13-01'")


async def test_the_menu_names_find_not_search(fake: FakeTelegram, bot: TelegramBot) -> None:
    for language in ("", "zh"):
        menu = fake.state.commands[json.dumps([{"type": "default"}, language], sort_keys=True)]
        names = [command["command"] for command in menu]
        assert "find" in names and "search" not in names
    zh = fake.state.commands[json.dumps([{"type": "default"}, "zh"], sort_keys=True)]
    description = next(str(c["description"]) for c in zh if c["command"] == "find")
    assert description.startswith("查找报告")
