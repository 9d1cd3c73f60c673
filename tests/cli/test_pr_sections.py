"""`prdigest pr REF SECTION` reads a section as the chat does: one list of names and aliases
(bot/chat/commands.SECTION_WORDS), English and Chinese (issue 15)."""

from __future__ import annotations

import pytest

from bot.chat.commands import SECTION_WORDS
from bot.cli import main
from tests.kits.paths import SEED

pytestmark = pytest.mark.usefixtures("private_store")


def _answer(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["pr", "7422", *args]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("word", ["risk", "风险", "RISKS", "risk_flags"])
def test_pr_takes_the_chats_section_aliases(word: str, capsys: pytest.CaptureFixture[str]) -> None:
    main(["ingest", "-q", str(SEED)])
    capsys.readouterr()
    assert _answer(capsys, word) == _answer(capsys, "risks")


def test_every_chat_section_word_works_on_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["ingest", "-q", str(SEED)])
    capsys.readouterr()
    for word, section in SECTION_WORDS.items():
        assert _answer(capsys, word) == _answer(capsys, section.value), word


def test_an_unknown_section_names_the_choices_as_the_chat_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["ingest", "-q", str(SEED)])
    capsys.readouterr()
    assert main(["pr", "7422", "nonsense", "--locale", "en"]) == 2
    assert capsys.readouterr().err == (
        "prdigest pr: There is no nonsense section. Choose one of: "
        "summary, risks, files, related, motivation, impl, comments, full.\n"
    )
