"""Every message key exists in zh and en with the same parameters, and a Chinese message is
Chinese: the errors of cadences, crons and queries come out in the chat's language, and only
what the user typed (in backticks) stays as written. English keeps each error's own line (the
CLI prints it)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from bot.core.models import Format, Locale, Platform
from bot.core.query import QueryError
from bot.core.query import parse as parse_query
from bot.core.render.labels import chat_words, error_text, labels, notice_keys
from bot.core.render.notices import ERROR_TEXTS, NOTICES
from bot.core.render.renderer import Renderer
from bot.core.timing.cadence import CadenceError, parse_cadence
from bot.core.timing.cron import CronError, next_fire, normalize
from tests.kits.paths import ROOT

NOW = datetime(2026, 3, 2, 12, tzinfo=UTC)
_BACKTICKED = re.compile(r"`[^`]*`")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_ALLOWED_LATIN = frozenset({"PR"})  # a name, not English
_ERROR_NOTICES = {"bad_query": "error", "bad_cadence": "error", "bad_schedule": "reason"}


def _placeholders(text: str) -> set[str]:
    return set(re.findall(r"{(\w+)}", text))


def _latin_words(text: str) -> list[str]:
    """The Latin words a reader sees outside backticks (commands and typed text are inside)
    and outside `{placeholders}`."""
    seen = re.sub(r"{\w+}", "", _BACKTICKED.sub("", text))
    return [w for w in _LATIN_WORD.findall(seen) if w not in _ALLOWED_LATIN]


def test_every_notice_key_is_in_both_locales_with_the_same_parameters() -> None:
    """The same keys and the same caller-given parameters; the place's words (`{whose}`,
    `{Holder}`...) are the chat's and each language takes the ones its grammar needs."""
    zh, en = NOTICES[Locale.ZH], NOTICES[Locale.EN]
    assert set(zh) == set(en), set(zh) ^ set(en)
    place = set(chat_words(None, Locale.EN))
    for key in zh:
        assert _placeholders(zh[key]) - place == _placeholders(en[key]) - place, key


def test_every_label_key_is_in_both_locales() -> None:
    zh, en = labels(Locale.ZH), labels(Locale.EN)
    assert set(zh) == set(en), set(zh) ^ set(en)
    for key in zh:
        assert _placeholders(zh[key]) == _placeholders(en[key]), key


@pytest.mark.parametrize("platform", [None, *Platform])
@pytest.mark.parametrize("private", [False, True])
def test_chat_words_have_the_same_names_in_both_locales(
    platform: Platform | None, private: bool
) -> None:
    zh, en = (set(chat_words(platform, locale, private=private)) for locale in Locale)
    assert zh == en


def _raised_error_keys() -> set[str]:
    """Every error key the error classes are raised with (read from the source)."""
    sources = [
        *sorted((ROOT / "bot" / "core" / "query").glob("*.py")),
        ROOT / "bot" / "core" / "timing" / "cadence.py",
        ROOT / "bot" / "core" / "timing" / "cron.py",
    ]
    text = "".join(path.read_text() for path in sources)
    return set(re.findall(r'"((?:query|cron|cadence)_[a-z_]+)"', text))


def test_every_error_key_has_chinese_words() -> None:
    raised = _raised_error_keys()
    assert len(raised) > 25, raised
    assert raised <= set(ERROR_TEXTS[Locale.ZH]), raised - set(ERROR_TEXTS[Locale.ZH])
    for key, text in ERROR_TEXTS[Locale.ZH].items():
        assert not _latin_words(text), (key, _latin_words(text))


def _cadence(text: str) -> Callable[[], object]:
    return lambda: parse_cadence(text, next_fire=next_fire, now=NOW)


# What a user may type wrong, and how it is read; each raises one error of a class.
BAD_INPUT: list[tuple[str, Callable[[], object]]] = [
    ("每天 9点", _cadence("每天 9点")),
    ("sometimes", _cadence("sometimes")),
    ("daily", _cadence("daily")),
    ("daily 25:00", _cadence("daily 25:00")),
    ("weekly fryday 09:00", _cadence("weekly fryday 09:00")),
    ("weekly zzz 09:00", _cadence("weekly zzz 09:00")),
    ("0 9 31 2 *", _cadence("0 9 31 2 *")),
    ("0 9 * * ?", lambda: normalize("0 9 * * ?")),
    ("0 9 * *", lambda: normalize("0 9 * *")),
    ("0 99 * * *", lambda: normalize("0 99 * * *")),
    ("rsk:fp8", lambda: parse_query("rsk:fp8")),
    ("zzzzzz:1", lambda: parse_query("zzzzzz:1")),
    ("a OR", lambda: parse_query("a OR")),
    ("a AND", lambda: parse_query("a AND")),
    ('"open', lambda: parse_query('"open')),
    ("(a", lambda: parse_query("(a")),
    ("a)", lambda: parse_query("a)")),
    ("()", lambda: parse_query("()")),
    ("a -", lambda: parse_query("a -")),
    ("tag>x", lambda: parse_query("tag>x")),
    ("impact:", lambda: parse_query("impact:")),
    ("impact:huge", lambda: parse_query("impact:huge")),
    ("since:yesterday", lambda: parse_query("since:yesterday")),
    ("number:abc", lambda: parse_query("number:abc")),
    ("number:9..1", lambda: parse_query("number:9..1")),
    ("   ", lambda: parse_query("   ")),
    ("x" * 2001, lambda: parse_query("x" * 2001)),
]


@pytest.mark.parametrize(("typed", "make"), BAD_INPUT, ids=[typed[:20] for typed, _ in BAD_INPUT])
def test_a_zh_error_notice_has_no_english_sentence(typed: str, make: Callable[[], object]) -> None:
    with pytest.raises((CadenceError, CronError, QueryError)) as caught:
        make()
    error = caught.value
    assert error.key, str(error)  # type: ignore[attr-defined]
    assert error_text(error, Locale.EN) == str(error), "English is the error's own line"
    zh = error_text(error, Locale.ZH)
    assert zh != str(error)
    renderer = Renderer()
    for key, param in _ERROR_NOTICES.items():
        for fmt in Format:
            shown = renderer.notice(key, fmt, Locale.ZH, **{param: zh}).text
            assert not _latin_words(shown), (key, fmt, shown)


def test_every_notice_renders_in_zh_and_en_on_every_platform() -> None:
    renderer = Renderer()
    for key in sorted(notice_keys()):
        params = {name: "值" for name in _placeholders(NOTICES[Locale.ZH][key])}
        for fmt in Format:
            for locale in Locale:
                assert renderer.notice(key, fmt, locale, **params).text, (key, fmt, locale)
