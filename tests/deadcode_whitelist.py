"""Names vulture reports as unused in bot/ that are used, and why each stays.

Read by vulture only (`make deadcode`, [tool.vulture] in pyproject.toml); never imported.
Each line names the attribute as vulture sees it; the comment says who uses it.
"""
# ruff: noqa: B018, F821
# mypy: ignore-errors

# Library hooks: the library calls them by name.
_._can_retry_async  # slack_sdk's AsyncRetryHandler (adapters/slack/client.py)
_.prepare_for_next_attempt_async  # slack_sdk's AsyncRetryHandler
_.next_attempt_requested  # slack_sdk's RetryState, read by the client after the handler
_.do_process_update  # python-telegram-bot's BaseUpdateProcessor (adapters/telegram/updates.py)
_.capture_signals  # uvicorn's Server (bot/service/server.py): the bot installs its own handlers
_.isolation_level  # sqlite3's connection attribute, set on connect (core/store/sql/db.py)
against  # SQLAlchemy's ClauseElement.self_group signature (core/store/search/balanced.py)
_._every_field  # a ClassVar set through cls (core/reports/model.py): vulture misses the read

# Read by structure, not by name.
repo_names  # Plan.keep unpacks the NamedTuple (core/digest/filter_query.py)
by_section  # chat/answers.py matches SectionAnswer(item, _, True) by position

# Read by the templates (templates/*/), which vulture does not read.
meta  # Block.meta: templates/{text,telegram}/section.j2
raw_url  # EntryView.raw_url: templates/text/digest.j2
flag_count  # EntryView.flag_count: templates/text/digest.j2
impact_mark  # EntryView.impact_mark: templates/text/digest.j2

# Tables the migrations make, described in the metadata (core/store/sql/tables.py) that
# store/bounds.py and the migrations' env read.
pace_slots  # written by core/delivery/pacing.py in one raw upsert
source_state  # made by migration 0001; the URL source keeps its state in memory today

# Feishu's documented limits, kept beside the ones the sender uses: the strict fake
# (tests/fakes/lark/) enforces them, so the pace (LARK_MAX_PER_SECOND) is checked against them.
LARK_CARD_MAX_BYTES
LARK_CARD_MAX_ELEMENTS
LARK_UUID_WINDOW_SECONDS
LARK_APP_PER_MINUTE
LARK_APP_PER_SECOND
LARK_PER_CHAT_QPS

# lark-oapi's long-connection client calls these on the objects it is handed
# (adapters/lark/socket.py): the event handler's method and the client's reconnect hooks.
_._do_without_validation
_.on_reconnecting
_.on_reconnected
