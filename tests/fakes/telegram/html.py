"""A strict checker for Telegram's HTML parse mode (https://core.telegram.org/bots/api#html-style).

It follows the Bot API server's own parser (tdlib `parse_html`) for tag names, entity decoding
and error wording ("Unsupported start tag "script" at byte offset 0"), and is stricter where the
real server silently accepts something a well-behaved bot should never send:

- a bare `&` or an unknown named entity (`&nbsp;`) is an error, not literal text;
- entities must end with `;`;
- attribute values must be quoted, unknown attributes are refused;
- links must be http(s) or tg://;
- no entities inside `code`/`pre` (except `pre > code class="language-…"`), no `a` inside `a`,
  no `blockquote` inside `blockquote`.

Offsets in errors are UTF-8 byte offsets into the input (as the real API reports them); entity
offsets and lengths are UTF-16 code units of the plain text (as the real API counts them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SIMPLE_TAGS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
}
ALLOWED_TAGS = {*SIMPLE_TAGS, "span", "a", "tg-emoji", "code", "pre", "blockquote"}
LINK_SCHEMES = ("http://", "https://", "tg://")
# tdlib's own limit: a code point must be below 0x10FFFF and not a surrogate.
MAX_CODE_POINT = 0x10FFFF

_SPECIAL = re.compile(r"[<&]")
_ENTITY = re.compile(r"&(?:(lt|gt|amp|quot)|#([0-9]{1,8})|#x([0-9a-fA-F]{1,7}));")
_ENTITY_LIKE = re.compile(r"&#?[A-Za-z0-9]+;")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_TAG_NAME_END = re.compile(r"[\s>]")
_ATTR_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_SPACE = re.compile(r"\s*")
_END_TAG = re.compile(r"</([^\s>]*)\s*>")
_LANGUAGE = re.compile(r"language-([A-Za-z0-9_+#.-]+)")
_EMOJI_ID = re.compile(r"[0-9]+")
_PRE_CODE_ONLY = 'Only one "code" tag is allowed in "pre", as its whole content'


class TelegramHTMLError(ValueError):
    """The text is not valid Telegram HTML. `offset` is a UTF-8 byte offset into the input."""

    def __init__(self, reason: str, offset: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset


@dataclass(frozen=True)
class Entity:
    """A MessageEntity: offset and length in UTF-16 code units of the plain text."""

    type: str
    offset: int
    length: int
    url: str | None = None
    language: str | None = None
    custom_emoji_id: str | None = None

    def to_api(self) -> dict[str, object]:
        """The entity as the Bot API returns it (optional keys only when set)."""
        data: dict[str, object] = {"type": self.type, "offset": self.offset, "length": self.length}
        for key in ("url", "language", "custom_emoji_id"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data


def utf16_len(text: str) -> int:
    """Length as Telegram counts it: UTF-16 code units (an emoji outside the BMP counts 2)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


@dataclass
class _OpenTag:
    name: str
    attrs: dict[str, str]
    start: int  # UTF-16 offset in the plain text
    byte_offset: int
    has_code_child: bool = False  # for pre: whether it holds a `code` child
    code_end: int | None = None  # for pre: where that child ended
    language: str | None = None  # for pre: from the child's class="language-…"


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.out: list[str] = []
        self.utf16 = 0
        self.stack: list[_OpenTag] = []
        self.entities: list[Entity] = []

    def byte_offset(self, pos: int) -> int:
        return len(self.text[:pos].encode("utf-8"))

    def fail(self, reason: str, pos: int, detail: str = "") -> TelegramHTMLError:
        """An error worded like the real API: `<reason> at byte offset N<detail>`."""
        offset = self.byte_offset(pos)
        return TelegramHTMLError(f"{reason} at byte offset {offset}{detail}", offset)

    def emit(self, chunk: str) -> None:
        if chunk:
            self.out.append(chunk)
            self.utf16 += utf16_len(chunk)

    def run(self) -> tuple[str, list[Entity]]:
        text = self.text
        while True:
            match = _SPECIAL.search(text, self.pos)
            if match is None:
                self.emit(text[self.pos :])
                break
            self.emit(text[self.pos : match.start()])
            self.pos = match.start()
            if text[self.pos] == "&":
                self.emit(self.entity())
            elif text.startswith("</", self.pos):
                self.end_tag()
            else:
                self.start_tag()
        if self.stack:
            top = self.stack[-1]
            reason = f'Can\'t find end tag corresponding to start tag "{top.name}"'
            raise TelegramHTMLError(reason, top.byte_offset)
        self.entities.sort(key=lambda e: (e.offset, -e.length))
        return "".join(self.out), self.entities

    def entity(self) -> str:
        """Decode the character reference at self.pos and move past it."""
        start = self.pos
        match = _ENTITY.match(self.text, start)
        if match is None:
            like = _ENTITY_LIKE.match(self.text, start)
            if like:
                raise self.fail(f'Unsupported HTML entity "{like.group()}"', start)
            raise self.fail('Character "&" must be escaped as "&amp;"', start)
        self.pos = match.end()
        named, decimal, hexadecimal = match.groups()
        if named:
            return _NAMED[named]
        code_point = int(decimal, 10) if decimal else int(hexadecimal, 16)
        if code_point == 0 or code_point >= MAX_CODE_POINT or 0xD800 <= code_point <= 0xDFFF:
            raise self.fail(f'Invalid numeric character reference "{match.group()}"', start)
        return chr(code_point)

    def start_tag(self) -> None:
        start = self.pos
        name_end = _TAG_NAME_END.search(self.text, start + 1)
        if name_end is None:
            raise self.fail("Unclosed start tag", start)
        name = self.text[start + 1 : name_end.start()].lower()
        if name not in ALLOWED_TAGS:
            raise self.fail(f'Unsupported start tag "{name}"', start)
        self.pos = name_end.start()
        attrs = self.attributes(name, start)
        self.check_nesting(name, attrs, start)
        self.check_attributes(name, attrs, start)
        self.stack.append(_OpenTag(name, attrs, self.utf16, self.byte_offset(start)))

    def attributes(self, tag: str, tag_start: int) -> dict[str, str]:
        attrs: dict[str, str] = {}
        text = self.text
        while True:
            self.skip_space()
            if self.pos >= len(text):
                raise self.fail(f'Unclosed start tag "{tag}"', tag_start)
            if text[self.pos] == ">":
                self.pos += 1
                return attrs
            name_match = _ATTR_NAME.match(text, self.pos)
            if name_match is None:
                raise self.fail(f'Empty attribute name in the tag "{tag}"', tag_start)
            name = name_match.group()
            if name in attrs:
                raise self.fail(f'Duplicate attribute "{name}" in the tag "{tag}"', tag_start)
            self.pos = name_match.end()
            self.skip_space()
            if self.pos < len(text) and text[self.pos] == "=":
                self.pos += 1
                self.skip_space()
                attrs[name] = self.quoted_value(tag, tag_start)
            elif tag == "blockquote" and name == "expandable":
                attrs[name] = ""
            else:
                reason = f'Expected equal sign in declaration of an attribute of the tag "{tag}"'
                raise self.fail(reason, tag_start)

    def quoted_value(self, tag: str, tag_start: int) -> str:
        text = self.text
        if self.pos >= len(text) or text[self.pos] not in "\"'":
            raise self.fail(f'Attribute values must be quoted in the tag "{tag}"', self.pos)
        quote = text[self.pos]
        value_start = self.pos
        self.pos += 1
        chars: list[str] = []
        while self.pos < len(text) and text[self.pos] != quote:
            if text[self.pos] == "&":
                chars.append(self.entity())
            else:
                chars.append(text[self.pos])
                self.pos += 1
        if self.pos >= len(text):
            raise self.fail("Unclosed end of attribute value", value_start)
        self.pos += 1
        return "".join(chars)

    def skip_space(self) -> None:
        match = _SPACE.match(self.text, self.pos)
        self.pos = match.end() if match else self.pos

    def check_attributes(self, tag: str, attrs: dict[str, str], start: int) -> None:
        allowed = {
            "a": {"href"},
            "span": {"class"},
            "tg-emoji": {"emoji-id"},
            "code": {"class"},
            "blockquote": {"expandable"},
        }.get(tag, set())
        for name in attrs:
            if name not in allowed:
                raise self.fail(f'Unsupported attribute "{name}" in the tag "{tag}"', start)
        if tag == "a":
            href = attrs.get("href", "")
            if not href.lower().startswith(LINK_SCHEMES) or len(href) <= len("tg://"):
                raise self.fail(f'Unsupported URL "{href}" in the tag "a"', start)
        elif tag == "span" and attrs.get("class") != "tg-spoiler":
            raise self.fail('Tag "span" must have class "tg-spoiler"', start)
        elif tag == "tg-emoji" and not _EMOJI_ID.fullmatch(attrs.get("emoji-id", "")):
            raise self.fail('Tag "tg-emoji" must have a numeric "emoji-id"', start)
        elif tag == "code" and "class" in attrs:
            if not _LANGUAGE.fullmatch(attrs["class"]):
                raise self.fail('Tag "code" class must be "language-<name>"', start)
            if not self.stack or self.stack[-1].name != "pre":
                raise self.fail('Tag "code" with a language must be inside "pre"', start)

    def check_nesting(self, tag: str, attrs: dict[str, str], start: int) -> None:
        if not self.stack:
            return
        parent = self.stack[-1]
        if tag in ("a", "blockquote") and any(open_tag.name == tag for open_tag in self.stack):
            raise self.fail(f'Tag "{tag}" can\'t be nested in "{tag}"', start)
        if parent.name == "code" or any(t.name == "pre" for t in self.stack[:-1]):
            raise self.fail('Entities can\'t be nested in "code" or "pre"', start)
        # Bold, italic, underline, strikethrough and spoiler "can contain and can be part of
        # any other entities, except pre and code" (the Bot API's MessageEntity rules).
        if tag in ("code", "pre") and any(t.name in SIMPLE_TAGS for t in self.stack):
            styled = next(t.name for t in self.stack if t.name in SIMPLE_TAGS)
            raise self.fail(f'Tag "{tag}" can\'t be nested in "{styled}"', start)
        if parent.name == "pre":
            if tag != "code" or parent.has_code_child or self.utf16 != parent.start:
                raise self.fail(_PRE_CODE_ONLY, start)
            parent.has_code_child = True

    def end_tag(self) -> None:
        start = self.pos
        match = _END_TAG.match(self.text, start)
        if match is None:
            raise self.fail("Unclosed end tag", start)
        if not self.stack:
            raise self.fail("Unexpected end tag", start)
        name = match.group(1).lower()
        top = self.stack[-1]
        if name != top.name:
            detail = f', expected "</{top.name}>", found "</{name}>"'
            raise self.fail("Unmatched end tag", start, detail)
        self.pos = match.end()
        self.stack.pop()
        self.close(top, start)

    def close(self, tag: _OpenTag, end_pos: int) -> None:
        if tag.name == "code" and self.stack and self.stack[-1].name == "pre":
            self.stack[-1].code_end = self.utf16
            language = tag.attrs.get("class", "").removeprefix("language-")
            self.stack[-1].language = language or None
            return
        if tag.name == "pre" and tag.has_code_child and tag.code_end != self.utf16:
            raise self.fail(_PRE_CODE_ONLY, end_pos)
        length = self.utf16 - tag.start
        if length == 0:
            return  # the real API drops empty entities
        self.entities.append(self.to_entity(tag, length))

    def to_entity(self, tag: _OpenTag, length: int) -> Entity:
        if tag.name in SIMPLE_TAGS or tag.name == "span":
            kind = SIMPLE_TAGS.get(tag.name, "spoiler")
            return Entity(kind, tag.start, length)
        if tag.name == "a":
            return Entity("text_link", tag.start, length, url=tag.attrs["href"])
        if tag.name == "tg-emoji":
            return Entity("custom_emoji", tag.start, length, custom_emoji_id=tag.attrs["emoji-id"])
        if tag.name == "pre":
            return Entity("pre", tag.start, length, language=tag.language)
        if tag.name == "blockquote":
            kind = "expandable_blockquote" if "expandable" in tag.attrs else "blockquote"
            return Entity(kind, tag.start, length)
        return Entity("code", tag.start, length)


def parse_telegram_html(text: str) -> tuple[str, list[Entity]]:
    """Parse Telegram HTML into (plain text, entities); raise TelegramHTMLError when invalid."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:  # a lone surrogate cannot reach the real API
        offset = len(text[: error.start].encode("utf-8", "surrogatepass"))
        raise TelegramHTMLError("Strings must be encoded in UTF-8", offset) from None
    return _Parser(text).run()
