"""A strict checker for Telegram's MarkdownV2 parse mode
(https://core.telegram.org/bots/api#markdownv2-style).

It follows the Bot API server's parser (tdlib `parse_markdown_v2`): every character of
``_*[]()~`>#+-=|{}.!`` outside an entity marker must be escaped with `\\`, inside `code`/`pre`
only `` ` `` (and `\\`) need it; errors are worded like the real API ("Character '.' is reserved
and must be escaped with the preceding '\\'"). Stricter than the real server: a link must have a
`(http(s)://…)` or `(tg://…)` URL (the server silently drops a link without a valid URL, which
shows the reader mangled text), and a `>` quote marker is only accepted at a line start.

Offsets in errors are UTF-8 byte offsets; entity offsets and lengths are UTF-16 code units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tests.fakes.telegram.html import LINK_SCHEMES, Entity, TelegramHTMLError, utf16_len

RESERVED = frozenset("_*[]()~`>#+-=|{}.!")
_CUSTOM_EMOJI_URL = re.compile(r"tg://emoji\?id=([0-9]+)")
_TYPE_NAMES = {
    "bold": "Bold",
    "italic": "Italic",
    "underline": "Underline",
    "strikethrough": "Strikethrough",
    "spoiler": "Spoiler",
    "code": "Code",
    "pre": "Pre",
    "text_link": "TextUrl",
    "custom_emoji": "CustomEmoji",
}
# Closing markers: (entity type, marker, the character after the marker must not be this)
_CLOSERS = {
    "bold": "*",
    "italic": "_",
    "underline": "__",
    "strikethrough": "~",
    "spoiler": "||",
    "code": "`",
    "pre": "```",
    "text_link": "]",
    "custom_emoji": "]",
}


class TelegramMarkdownError(TelegramHTMLError):
    """The text is not valid MarkdownV2. `offset` is a UTF-8 byte offset into the input."""


@dataclass
class _Open:
    type: str
    start: int  # UTF-16 offset in the plain text
    pos: int  # index in the input, for errors
    language: str | None = None


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.out: list[str] = []
        self.utf16 = 0
        self.stack: list[_Open] = []
        self.entities: list[Entity] = []
        self.quote: _Open | None = None
        self.quote_end = 0

    def fail(self, reason: str, pos: int | None = None) -> TelegramMarkdownError:
        """An error at `pos` (default: here); the real API names no offset for reserved chars."""
        offset = len(self.text[: self.i if pos is None else pos].encode("utf-8"))
        if not reason.startswith("Character"):
            reason = f"{reason} at byte offset {offset}"
        return TelegramMarkdownError(reason, offset)

    def emit(self, chunk: str) -> None:
        self.out.append(chunk)
        self.utf16 += utf16_len(chunk)

    def at(self, offset: int = 0) -> str:
        index = self.i + offset
        return self.text[index] if index < len(self.text) else ""

    def run(self) -> tuple[str, list[Entity]]:
        while self.i < len(self.text):
            if self.i == 0 or self.text[self.i - 1] == "\n":
                self.line_start()
            if self.i < len(self.text):
                self.step()
        self.close_quote()
        if self.stack:
            top = self.stack[-1]
            offset = len(self.text[: top.pos].encode("utf-8"))
            reason = f"Can't find end of {_TYPE_NAMES[top.type]} entity at byte offset {offset}"
            raise TelegramMarkdownError(reason, offset)
        self.entities.sort(key=lambda e: (e.offset, -e.length))
        return "".join(self.out), self.entities

    def step(self) -> None:
        char, following = self.at(), self.at(1)
        if char == "\\" and following and 0 < ord(following) <= 126:
            self.emit(following)
            self.i += 2
            return
        in_code = bool(self.stack) and self.stack[-1].type in ("code", "pre")
        if char == "\n" and self.quote is not None:
            self.quote_end = self.utf16
        if (in_code and char != "`") or (not in_code and char not in RESERVED):
            self.emit(char)
            self.i += 1
        elif self.stack and self.closes(self.stack[-1]):
            self.close(self.stack.pop())
        elif char == "|" and following == "|" and self.ends_expandable_quote():
            self.i += 2
        else:
            self.open(char, following)

    def closes(self, top: _Open) -> bool:
        marker = _CLOSERS[top.type]
        if not self.text.startswith(marker, self.i):
            return False
        return not (top.type == "italic" and self.at(1) == "_")

    def open(self, char: str, following: str) -> None:
        start = self.i
        if char == "_" and following == "_":
            kind, width = "underline", 2
        elif char == "|" and following == "|":
            kind, width = "spoiler", 2
        elif char == "!" and following == "[":
            kind, width = "custom_emoji", 2
        elif char in "_*~[`":
            kind = {"_": "italic", "*": "bold", "~": "strikethrough", "[": "text_link"}.get(
                char, "code"
            )
            width = 1
        else:
            raise self.fail(
                f"Character '{char}' is reserved and must be escaped with the preceding '\\'"
            )
        if char == "`" and self.text.startswith("```", start):
            self.i += 3
            self.stack.append(_Open("pre", self.utf16, start, self.pre_language()))
            return
        self.i += width
        self.stack.append(_Open(kind, self.utf16, start))

    def pre_language(self) -> str | None:
        """```lang then one line break: the language is the word right after the fence."""
        match = re.compile(r"[^\s`]+").match(self.text, self.i)
        language = None
        if match and match.end() < len(self.text) and self.text[match.end()] != "`":
            language = match.group()
            self.i = match.end()
        for newline in ("\r\n", "\n\r", "\n", "\r"):
            if self.text.startswith(newline, self.i):
                self.i += len(newline)
                break
        return language

    def close(self, top: _Open) -> None:
        self.i += len(_CLOSERS[top.type])
        url = emoji_id = None
        if top.type in ("text_link", "custom_emoji"):
            url = self.link_url(top)
        if top.type == "custom_emoji":
            match = _CUSTOM_EMOJI_URL.fullmatch(url or "")
            if match is None:
                raise self.fail("Custom emoji entity must contain a tg://emoji URL", top.pos)
            emoji_id, url = match.group(1), None
        length = self.utf16 - top.start
        if length:
            self.entities.append(
                Entity(top.type, top.start, length, url, top.language, custom_emoji_id=emoji_id)
            )

    def link_url(self, top: _Open) -> str:
        if self.at() != "(":
            raise self.fail("Link text must be followed by a URL in parentheses", top.pos)
        self.i += 1
        url_start = self.i
        url: list[str] = []
        while self.i < len(self.text) and self.text[self.i] != ")":
            if self.at() == "\\" and self.at(1) and 0 < ord(self.at(1)) <= 126:
                self.i += 1
            url.append(self.text[self.i])
            self.i += 1
        if self.i >= len(self.text):
            offset = len(self.text[:url_start].encode("utf-8"))
            raise TelegramMarkdownError(f"Can't find end of a URL at byte offset {offset}", offset)
        self.i += 1
        value = "".join(url)
        if top.type == "text_link" and not value.lower().startswith(LINK_SCHEMES):
            raise self.fail(f'Unsupported URL "{value}"', url_start)
        return value

    def line_start(self) -> None:
        """Block quotes: lines starting with `>` (or `**>` for an expandable one)."""
        expandable = self.text.startswith("**>", self.i)
        if self.at() == ">" or (expandable and self.quote is None):
            if self.quote is None:
                kind = "expandable_blockquote" if expandable else "blockquote"
                self.quote = _Open(kind, self.utf16, self.i)
            self.i += 3 if expandable else 1
        else:
            self.close_quote()

    def ends_expandable_quote(self) -> bool:
        quote = self.quote
        after = self.at(2)
        if quote is None or quote.type != "expandable_blockquote" or after not in ("", "\n"):
            return False
        self.quote_end = self.utf16
        self.close_quote()
        return True

    def close_quote(self) -> None:
        if self.quote is None:
            return
        end = self.quote_end
        if self.i >= len(self.text):  # the quote runs to the end, minus a final line break
            end = self.utf16 - (1 if self.out and self.out[-1].endswith("\n") else 0)
        if end > self.quote.start:
            self.entities.append(Entity(self.quote.type, self.quote.start, end - self.quote.start))
        self.quote = None


def parse_markdown_v2(text: str) -> tuple[str, list[Entity]]:
    """Parse MarkdownV2 into (plain text, entities); raise TelegramMarkdownError when invalid."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        offset = len(text[: error.start].encode("utf-8", "surrogatepass"))
        raise TelegramMarkdownError("Strings must be encoded in UTF-8", offset) from None
    return _Parser(text).run()
