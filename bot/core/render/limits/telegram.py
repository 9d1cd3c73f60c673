"""Telegram's limits: what one message, keyboard or button may hold, and the flood limits a
bot keeps to. Renderers, the sender and its pacing take them from here; each says its source."""

from typing import Final

# Bot API, sendMessage: text is at most 4096 characters (UTF-16 units) after entity parsing.
TELEGRAM_MAX_UTF16: Final = 4096
# Telegram ignores entities past the 100th (MessageLimit.MESSAGE_ENTITIES).
TELEGRAM_MAX_ENTITIES: Final = 100
# An inline keyboard much larger than this is refused ("reply markup is too long").
TELEGRAM_MAX_BUTTONS: Final = 100
# Bot API, InlineKeyboardButton: callback_data is 1-64 bytes.
TELEGRAM_MAX_CALLBACK_BYTES: Final = 64
# Bots FAQ, broadcasting: ≤ 1 message per second per chat.
TELEGRAM_PER_CHAT_SECONDS: Final = 1.0
# Bots FAQ, broadcasting: 20 messages per minute per group, with a second of headroom.
TELEGRAM_GROUP_WINDOW_SECONDS: Final = 61.0
# Bots FAQ, broadcasting: the 20 messages a group may get in that window.
TELEGRAM_GROUP_MAX_IN_WINDOW: Final = 20
# Bots FAQ, broadcasting: about 30 messages per second to all chats together.
TELEGRAM_OVERALL_LIMIT: Final = 30
# Bots FAQ, broadcasting: the window TELEGRAM_OVERALL_LIMIT counts in.
TELEGRAM_OVERALL_SECONDS: Final = 1.0
# The pace under the 30/s; the arrival window keeps any second to 30 arrivals however they bunch.
TELEGRAM_MAX_PER_SECOND: Final = 29.7
# Bot API, answerCallbackQuery: the notification or alert text is 0-200 characters.
TELEGRAM_ALERT_MAX: Final = 200
# Bot API, createForumTopic: a topic's name is 1-128 characters.
TELEGRAM_TOPIC_NAME_MAX: Final = 128
