"""Slack's limits: what one message, block, button or interactive answer may hold, and how fast
messages may go. Renderers, senders and replies take them from here; each says its source."""

from typing import Final

# Block Kit, blocks: at most 50 in a message; the rest is headroom.
SLACK_MAX_BLOCKS: Final = 45
# Undocumented: Slack refuses about 12k characters of blocks in total (msg_blocks_too_long).
SLACK_MAX_MESSAGE_CHARS: Final = 10_000
# Block Kit, section block: its text is at most 3000 characters.
SLACK_SECTION_TEXT_MAX: Final = 3000
# Block Kit, header block: its text is at most 150 characters.
SLACK_HEADER_MAX: Final = 150
# chat.postMessage: the notification text; Slack truncates past 40k, keep it short.
SLACK_FALLBACK_MAX: Final = 3000
# Block Kit, button element: its value is at most 2000 characters.
SLACK_BUTTON_VALUE_MAX: Final = 2000
# Block Kit, option object: an overflow option's value is at most 150 characters.
SLACK_OPTION_VALUE_MAX: Final = 150
# Block Kit, option object: an overflow option's text (plain_text) is at most 75 characters.
SLACK_OPTION_TEXT_MAX: Final = 75
# chat.postMessage rate limit: about one message per second per channel.
SLACK_PER_CHANNEL_INTERVAL: Final = 1.0
# Slack's rate limits: the workspace-wide pace across channels.
SLACK_MAX_PER_SECOND: Final = 20.0
# Interactivity, response_url: Slack accepts five posts per response_url.
SLACK_RESPONSE_URL_USES: Final = 5
# Block Kit, view object: a modal's title, submit and close texts are at most 24 characters.
SLACK_VIEW_TITLE_MAX: Final = 24
# Block Kit, view object: a modal or the Home tab holds at most 100 blocks.
SLACK_VIEW_BLOCKS_MAX: Final = 100
# Block Kit, multi-select menu: at most 100 options.
SLACK_SELECT_OPTIONS_MAX: Final = 100
