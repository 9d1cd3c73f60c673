"""Feishu/Lark's limits: what one interactive card may hold, and how fast messages may go.
The renderer, the sender and the fake take them from here; each says its source (docs/lark.md
lists the pages)."""

from typing import Final

# Card JSON (Feishu "卡片 JSON 结构" / message create): the card's JSON is at most 30 KB.
LARK_CARD_MAX_BYTES: Final = 30 * 1024
# What a rendered card may use of that: the rest is headroom for the header and JSON framing.
LARK_CARD_BUDGET_BYTES: Final = 24_000
# Card JSON 2.0 allows 200 components in one card; a 1.0 card keeps far below (our budget).
LARK_CARD_MAX_ELEMENTS: Final = 200
LARK_CARD_BUDGET_ELEMENTS: Final = 60
# Card header: a plain_text title; longer ones are cut with "…" (Feishu shows about 100).
LARK_HEADER_MAX: Final = 100
# Message create: `uuid` is at most 50 characters; a repeat within an hour is not sent again.
LARK_UUID_MAX: Final = 50
LARK_UUID_WINDOW_SECONDS: Final = 3600
# Message create / reply: 1,000 requests a minute and 50 a second per app ("接口频率限制").
LARK_APP_PER_MINUTE: Final = 1000
LARK_APP_PER_SECOND: Final = 50
# The pace we keep: 1,000 a minute is 16.7/s sustained; 90 % of it, so jitter never crosses it.
LARK_MAX_PER_SECOND: Final = 15.0
# Message create: 5 QPS to one user, and 5 QPS to one group shared by every bot in it.
LARK_PER_CHAT_QPS: Final = 5
# Between two messages to one chat: a fifth of a second, with a quarter for the other bots.
LARK_PER_CHAT_INTERVAL: Final = 0.25
# What a button's or an option's value carries (ours: the action's data) at most, in bytes.
LARK_VALUE_MAX: Final = 1000
