"""The strict Telegram markup checkers the fake Bot API uses for parse_mode HTML and MarkdownV2."""

from __future__ import annotations

import html

import pytest
from hypothesis import given
from hypothesis import strategies as st
from telegram.helpers import escape_markdown

from tests.fakes.telegram.html import Entity, TelegramHTMLError, parse_telegram_html, utf16_len
from tests.fakes.telegram.markdown import TelegramMarkdownError, parse_markdown_v2


def kinds(entities: list[Entity]) -> list[tuple[str, int, int]]:
    return [(entity.type, entity.offset, entity.length) for entity in entities]


def test_nested_tags_give_plain_text_and_utf16_entities() -> None:
    plain, entities = parse_telegram_html("😀 <b>bold <i>both</i></b> <u>u</u>")

    assert plain == "😀 bold both u"
    assert kinds(entities) == [("bold", 3, 9), ("italic", 8, 4), ("underline", 13, 1)]


def test_the_four_named_entities_are_decoded() -> None:
    plain, _ = parse_telegram_html("a &lt;b&gt; &amp;&amp; &quot;c&quot;")

    assert plain == 'a <b> && "c"'


def test_numeric_entities_are_decoded_and_counted_in_utf16() -> None:
    plain, entities = parse_telegram_html("&#60;&#x1F600;<b>x</b>")

    assert plain == "<😀x"
    assert kinds(entities) == [("bold", 3, 1)]


@pytest.mark.parametrize("text", ["&nbsp;", "&copy; 2026", "&#X41;", "&lt without semicolon"])
def test_other_entities_are_refused(text: str) -> None:
    with pytest.raises(TelegramHTMLError, match=r"entity|escaped"):
        parse_telegram_html(text)


@pytest.mark.parametrize("text", ["a & b", "AT&T", "x < y", "<>", "<3"])
def test_a_bare_ampersand_or_angle_bracket_is_refused(text: str) -> None:
    with pytest.raises(TelegramHTMLError):
        parse_telegram_html(text)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("<b>open", 'Can\'t find end tag corresponding to start tag "b"'),
        ("close</b>", "Unexpected end tag at byte offset 5"),
        ("<b><i>x</b></i>", 'Unmatched end tag at byte offset 7, expected "</i>", found "</b>"'),
        ("<script>x</script>", 'Unsupported start tag "script" at byte offset 0'),
        ("é<br>", 'Unsupported start tag "br" at byte offset 2'),
    ],
)
def test_unbalanced_misnested_and_unknown_tags_are_refused_like_the_real_api(
    text: str, reason: str
) -> None:
    with pytest.raises(TelegramHTMLError) as caught:
        parse_telegram_html(text)

    assert str(caught.value) == reason


def test_error_offsets_are_utf8_bytes() -> None:
    with pytest.raises(TelegramHTMLError) as caught:
        parse_telegram_html("😀é & x")

    assert caught.value.offset == len("😀é ".encode())


def test_pre_with_a_code_language_gives_one_pre_entity() -> None:
    plain, entities = parse_telegram_html('<pre><code class="language-python">x = 1</code></pre>')

    assert plain == "x = 1"
    assert entities == [Entity("pre", 0, 5, language="python")]


def test_links_spoilers_quotes_and_custom_emoji_are_accepted() -> None:
    text = (
        '<a href="https://github.com/o/r/pull/1?a=1&amp;b=2">PR</a> '
        '<span class="tg-spoiler">s</span><tg-spoiler>t</tg-spoiler> '
        "<blockquote expandable>q</blockquote>"
        '<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>'
    )

    _, entities = parse_telegram_html(text)

    assert [entity.type for entity in entities] == [
        "text_link",
        "spoiler",
        "spoiler",
        "expandable_blockquote",
        "custom_emoji",
    ]
    assert entities[0].url == "https://github.com/o/r/pull/1?a=1&b=2"


@pytest.mark.parametrize(
    "text",
    [
        '<a href="javascript:alert(1)">x</a>',
        '<a href="data:text/html,x">x</a>',
        "<a>no href</a>",
        "<a href=https://unquoted.example>x</a>",
        '<a href="https://a.example"><a href="https://b.example">x</a></a>',
        "<code>no <b>tags</b> in code</code>",
        "<pre>text <code>then code</code></pre>",
        '<code class="language-py">a language outside pre</code>',
        '<span class="other">x</span>',
        '<b style="color:red">x</b>',
        "<blockquote><blockquote>x</blockquote></blockquote>",
    ],
)
def test_unsafe_links_bad_attributes_and_forbidden_nesting_are_refused(text: str) -> None:
    with pytest.raises(TelegramHTMLError):
        parse_telegram_html(text)


def test_empty_tags_give_no_entity() -> None:
    assert parse_telegram_html("<b></b>x") == ("x", [])


@given(st.text())
def test_any_text_escaped_with_html_escape_reads_back_unchanged(text: str) -> None:
    plain, entities = parse_telegram_html(html.escape(text))

    assert plain == text
    assert entities == []
    assert utf16_len(plain) == len(text.encode("utf-16-le")) // 2


# -- MarkdownV2 ------------------------------------------------------------------------------


def test_markdown_v2_example_from_the_docs_gives_nested_entities() -> None:
    text = (
        "*bold _italic bold ~italic bold strikethrough ||italic bold strikethrough spoiler||~ "
        "__underline italic bold___ bold*"
    )

    plain, entities = parse_markdown_v2(text)

    assert plain.startswith("bold italic bold italic bold strikethrough")
    assert [e.type for e in entities] == [
        "bold",
        "italic",
        "strikethrough",
        "spoiler",
        "underline",
    ]
    assert entities[0].length == utf16_len(plain)


def test_markdown_v2_links_code_pre_and_quotes() -> None:
    text = "[PR \\#1](https://github.com/o/r/pull/1) `a_b` ```python\nx = 1\n```\n>quoted"

    plain, entities = parse_markdown_v2(text)

    assert plain == "PR #1 a_b x = 1\n\nquoted"
    assert [(e.type, e.url or e.language) for e in entities] == [
        ("text_link", "https://github.com/o/r/pull/1"),
        ("code", None),
        ("pre", "python"),
        ("blockquote", None),
    ]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("PR 7422.", "Character '.' is reserved and must be escaped with the preceding '\\'"),
        ("a > b", "Character '>' is reserved and must be escaped with the preceding '\\'"),
        ("*open", "Can't find end of Bold entity at byte offset 0"),
        ("see [docs]", "Link text must be followed by a URL in parentheses at byte offset 4"),
        ("[x](javascript:alert(1))", 'Unsupported URL "javascript:alert(1" at byte offset 4'),
    ],
)
def test_markdown_v2_unescaped_reserved_characters_and_open_entities_are_refused(
    text: str, reason: str
) -> None:
    with pytest.raises(TelegramMarkdownError) as caught:
        parse_markdown_v2(text)

    assert str(caught.value) == reason


@given(st.text())
def test_any_text_escaped_with_ptb_escape_markdown_reads_back_unchanged(text: str) -> None:
    plain, entities = parse_markdown_v2(escape_markdown(text, version=2))

    assert plain == text
    assert entities == []
