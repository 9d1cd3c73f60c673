"""What every chat answer becomes on the wire, the same for Slack and Telegram.

- An answer is at most `MAX_ANSWER_MESSAGES` messages. A longer one (`/pr N full` of a huge
  report, a mention, a big `/digest`) shows its first messages and then one line saying how
  much was left out and where the whole report is (its link, and `prdigest pr REF full`).
- Rendering a report or a digest runs in a worker thread: a huge report costs CPU, and while
  it renders every other chat's command, every ack and `/healthz` must go on.
- A store that cannot be reached (a database outage) is answered "temporarily unavailable",
  not left unanswered and not called a bug.
"""

from __future__ import annotations

import asyncio

from bot.answers import DigestAnswer, Notice, Reply, SectionAnswer, render_reply
from bot.core.models import Format, Locale
from bot.core.render.labels import UnknownNoticeError, notice_keys
from bot.core.render.renderer import RenderedMessage, Renderer

# One rule for every interactive answer on every platform. Slack's response_url takes five
# posts (slash commands and buttons), so this may not grow past it: see slack/replies.py.
MAX_ANSWER_MESSAGES = 5

UNAVAILABLE = Notice("unavailable")

# Until bot/core/render/labels.py carries these keys (asked for in the lead's request list),
# their wording lives here; `notice_message` prefers the labels table as soon as it has them.
PENDING_NOTICES: dict[Locale, dict[str, str]] = {
    Locale.ZH: {
        "unavailable": "机器人暂时无法使用（数据库连接中断），请稍后再试。",
        "answer_cut": "只显示了前 {shown} 条（共 {total} 条）。完整报告：{link}，"
        "或在机器人所在主机运行 prdigest pr {ref} full。",
        "answer_cut_digest": "只显示了前 {shown} 条（共 {total} 条）。"
        "其余条目会在下一次定时推送中出现。",
    },
    Locale.EN: {
        "unavailable": "The bot is temporarily unavailable (its database cannot be reached); "
        "please try again in a few minutes.",
        "answer_cut": "Showing the first {shown} of {total} messages. The full report: {link}, "
        "or run prdigest pr {ref} full on the bot's host.",
        "answer_cut_digest": "Showing the first {shown} of {total} messages. "
        "The rest arrive with the next scheduled digest.",
    },
}


def notice_message(
    renderer: Renderer, notice: Notice, fmt: Format, locale: Locale
) -> RenderedMessage:
    """A notice rendered for `fmt`, from the labels table (or `PENDING_NOTICES`)."""
    if notice.key in notice_keys():
        return renderer.notice(notice.key, fmt, locale, **notice.params)
    wording = PENDING_NOTICES[Locale(locale)].get(notice.key)
    if wording is None:
        raise UnknownNoticeError(f"unknown notice {notice.key!r}")
    # The platform's own notice template and escaping, as `Renderer.notice` uses them.
    platform = renderer._platform(fmt)  # goes once labels.py has the keys
    return platform.notice(wording.format_map(notice.params), Locale(locale))


def _cut_notice(reply: Reply, shown: int, total: int) -> Notice:
    counts = {"shown": str(shown), "total": str(total)}
    if isinstance(reply, SectionAnswer):
        report = reply.item.report
        return Notice("answer_cut", {**counts, "link": report.url or "-", "ref": report.ref})
    return Notice("answer_cut_digest", counts)


def capped(
    renderer: Renderer,
    reply: Reply,
    messages: list[RenderedMessage],
    fmt: Format,
    locale: Locale,
) -> list[RenderedMessage]:
    """At most MAX_ANSWER_MESSAGES: the first ones, then where to read the rest."""
    if len(messages) <= MAX_ANSWER_MESSAGES:
        return messages
    shown = MAX_ANSWER_MESSAGES - 1
    pointer = notice_message(renderer, _cut_notice(reply, shown, len(messages)), fmt, locale)
    return [*messages[:shown], pointer]


async def answer_messages(
    renderer: Renderer, reply: Reply, fmt: Format, locale: Locale
) -> list[RenderedMessage]:
    """The messages a chat gets for `reply`: rendered off the event loop, capped."""
    if isinstance(reply, Notice):
        return [notice_message(renderer, reply, fmt, locale)]
    assert isinstance(reply, SectionAnswer | DigestAnswer)
    messages = await asyncio.to_thread(render_reply, renderer, reply, fmt, locale)
    return capped(renderer, reply, messages, fmt, locale)
