"""What a Feishu message says to the bot: mentions, rich text, and the request it becomes."""

from __future__ import annotations

import json

import pytest

from bot.adapters.lark.read_card import read_card, read_marks
from bot.adapters.lark.words import message_words, request_of
from bot.chat.commands import UsageError
from bot.chat.requests import Ask, Find, ShowReport, Subscribe, Unsubscribe, Verb
from bot.core.models import Section

BOT = "ou_bot00000001"
ME = {"key": "@_user_1", "id": {"open_id": BOT}, "name": "prdigest"}
ALICE = {"key": "@_user_2", "id": {"open_id": "ou_alice000001"}, "name": "alice"}


def text(value: str) -> str:
    return json.dumps({"text": value}, ensure_ascii=False)


def test_the_bots_mention_is_dropped_and_others_read_as_names() -> None:
    said = message_words("text", text("@_user_1 7422 风险 cc @_user_2"), [ME, ALICE], BOT)
    assert said is not None and said.addressed
    assert said.words == "7422 风险 cc @alice"


def test_a_message_mentioning_only_someone_else_is_not_addressed() -> None:
    said = message_words("text", text("@_user_2 look at 7422"), [ALICE], BOT)
    assert said is not None and not said.addressed


def test_rich_text_is_read_and_other_kinds_are_not() -> None:
    post = {
        "title": "",
        "content": [[{"tag": "at", "user_id": "@_user_1"}, {"tag": "text", "text": " 7422 files"}]],
    }
    said = message_words("post", json.dumps(post), [ME], BOT)
    assert said is not None and said.words == "7422 files" and said.addressed
    assert message_words("image", json.dumps({"image_key": "img_1"}), [], BOT) is None
    assert message_words("text", "not json", [], BOT) is None


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("7422 风险", ShowReport),
        ("#7422 的风险", ShowReport),
        ("show risks for #7422", ShowReport),
        ("risks of #7422", ShowReport),
        ("/pr 7422 files", ShowReport),
        ("subscribe rollout -ci at 09:00", Subscribe),
        ("unsubscribe 2", Unsubscribe),
        ("find 权重", Find),
        ("/find 权重", Find),
        ("help", Ask),
    ],
)
def test_words_become_the_request_every_platform_reads(words: str, expected: type) -> None:
    reading = request_of(words)
    assert reading is not None and isinstance(reading(), expected)


def test_a_section_word_in_a_sentence_names_the_section() -> None:
    for words in ("7422 风险", "risks of #7422", "#7422 的风险"):
        reading = request_of(words)
        assert reading is not None
        shown = reading()
        assert isinstance(shown, ShowReport) and shown.section is Section.RISKS


def test_words_that_are_neither_a_command_nor_a_question_get_none() -> None:
    assert request_of("hello there") is None
    reading = request_of("unsubscribe soon")  # a command, wrongly typed: its usage answers
    assert reading is not None
    with pytest.raises(UsageError):
        reading()
    unread = request_of("unread")
    assert unread is not None and unread() == Ask(Verb.UNREAD)


def _card() -> dict[str, object]:
    def button(data: str) -> dict[str, object]:
        return {
            "tag": "button",
            "text": {"tag": "plain_text", "content": data},
            "value": {"data": data},
        }

    return {
        "config": {"update_multi": True},
        "elements": [
            {"tag": "div", "text": {"tag": "lark_md", "content": "#1 one"}},
            {"tag": "action", "actions": [button("read:o/r#1"), button("report:o/r#1")]},
            {
                "tag": "div",
                "text": {"tag": "lark_md", "content": "#2 two"},
                "extra": button("read:2"),
            },
        ],
    }


def test_a_read_entry_shows_its_readers_and_loses_only_its_read_button() -> None:
    marks = read_marks({"o/r#1": ["alice", "*bob*"], "o/r#2": ["carol"]}, "✅ {names}")
    card = read_card(_card(), ("o/r#1", "o/r#2"), marks)
    first, actions, second = card["elements"]
    assert first["text"]["content"] == "#1 one\n✅ alice, &#42;bob&#42;"
    assert [a["value"]["data"] for a in actions["actions"]] == ["report:o/r#1"]
    assert second["text"]["content"] == "#2 two · ✅ carol" and "extra" not in second
    unread = read_card(_card(), ("o/r#1", "o/r#2"), {})
    assert unread == _card()
