"""Message content checks of the fake: text after entity parsing, and inline keyboards.

Wording follows the real Bot API ("Bad Request: message is too long", "BUTTON_DATA_INVALID").
"""

from __future__ import annotations

from tests.fakes.telegram.html import Entity, TelegramHTMLError, parse_telegram_html, utf16_len
from tests.fakes.telegram.markdown import TelegramMarkdownError, parse_markdown_v2
from tests.fakes.telegram.spec import bad_request

MAX_TEXT_UTF16 = 4096
MAX_CALLBACK_DATA_BYTES = 64
MAX_INLINE_BUTTONS = 100
BUTTON_URL_SCHEMES = ("http://", "https://", "tg://")
PARSE_MODES = ("HTML", "MarkdownV2", "Markdown")
BUTTON_ACTIONS = (
    "url",
    "callback_data",
    "web_app",
    "login_url",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "copy_text",
    "callback_game",
    "pay",
)


def parse_text(text: str, parse_mode: str | None, entities: object) -> tuple[str, list[Entity]]:
    """(plain text, entities) the chat will show, or the BadRequest the real API would answer."""
    if parse_mode:
        plain, parsed = _parse_marked_up(text, parse_mode)
    else:
        plain, parsed = text, _explicit_entities(text, entities)
    if not plain.strip():
        raise bad_request("message text is empty")
    if utf16_len(plain) > MAX_TEXT_UTF16:
        raise bad_request("message is too long")
    return plain, parsed


def _parse_marked_up(text: str, parse_mode: str) -> tuple[str, list[Entity]]:
    if parse_mode == "HTML":
        try:
            return parse_telegram_html(text)
        except TelegramHTMLError as error:
            raise bad_request(f"can't parse entities: {error}") from None
    if parse_mode == "MarkdownV2":
        try:
            return parse_markdown_v2(text)
        except TelegramMarkdownError as error:
            raise bad_request(f"can't parse entities: {error}") from None
    if parse_mode == "Markdown":
        # Legacy Markdown is not checked by this fake (the bot renders HTML): counted as plain.
        return text, []
    raise bad_request("unsupported parse_mode")


def _explicit_entities(text: str, entities: object) -> list[Entity]:
    if not entities:
        return []
    assert isinstance(entities, list)  # the spec check ran before
    length = utf16_len(text)
    parsed = []
    for item in entities:
        offset, size = int(item["offset"]), int(item["length"])
        if offset < 0 or size <= 0 or offset + size > length:
            raise bad_request("can't parse entities: entity is out of the text")
        parsed.append(
            Entity(str(item["type"]), offset, size, item.get("url"), item.get("language"))
        )
    return parsed


def check_reply_markup(markup: object) -> None:
    """Inline keyboards: labelled buttons with exactly one action, data ≤ 64 bytes, safe URLs."""
    if not isinstance(markup, dict) or "inline_keyboard" not in markup:
        return
    buttons = [button for row in markup["inline_keyboard"] for button in row]
    if len(buttons) > MAX_INLINE_BUTTONS:
        raise bad_request("reply markup is too long")
    for button in buttons:
        _check_button(button)


def _check_button(button: dict[str, object]) -> None:
    if not str(button.get("text", "")).strip():
        raise bad_request("BUTTON_TEXT_INVALID")
    actions = [key for key in BUTTON_ACTIONS if key in button]
    if not actions:
        raise bad_request("text buttons are unallowed in the inline keyboard")
    if len(actions) > 1:
        raise bad_request("can't parse inline keyboard button: only one action is allowed")
    data = button.get("callback_data")
    if data is not None and not 1 <= len(str(data).encode("utf-8")) <= MAX_CALLBACK_DATA_BYTES:
        raise bad_request("BUTTON_DATA_INVALID")
    url = button.get("url")
    if url is not None and not str(url).lower().startswith(BUTTON_URL_SCHEMES):
        raise bad_request("BUTTON_URL_INVALID")
