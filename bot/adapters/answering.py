"""What every chat answer becomes on the wire, the same for Slack and Telegram.

- An answer is at most `MAX_ANSWER_MESSAGES` messages. A longer one (`/pr N full` of a huge
  report, a mention, a big `/digest`) shows its first messages and then one line saying how
  much was left out and where the whole report is (its link, and the Full report button,
  which shows every section: a Slack modal, a Telegram pager).
- Rendering a report or a digest runs in a worker thread: a huge report costs CPU, and while
  it renders every other chat's command, every ack and `/healthz` must go on.
- A store that cannot be reached (a database outage) is answered "temporarily unavailable",
  not left unanswered and not called a bug.
"""

from __future__ import annotations

import asyncio
from typing import Final

from bot.chat.answers import DigestAnswer, Notice, Reply, SectionAnswer, render_notice, render_reply
from bot.core.models import Format, Locale
from bot.core.render.limits.slack import SLACK_RESPONSE_URL_USES
from bot.core.render.renderer import RenderedMessage, Renderer
from bot.core.render.views import github_pr_url

# One rule for every interactive answer on every platform: as many messages as Slack's
# response_url takes (slash commands and buttons answer through it), and no more.
MAX_ANSWER_MESSAGES: Final = SLACK_RESPONSE_URL_USES

UNAVAILABLE = Notice("unavailable")


def notice_message(
    renderer: Renderer, notice: Notice, fmt: Format, locale: Locale
) -> RenderedMessage:
    """A notice rendered for `fmt`, in the platform's notice template and escaping."""
    return render_notice(renderer, notice, fmt, locale)


def _cut_notice(reply: Reply, shown: int, total: int) -> Notice:
    counts = {"shown": str(shown), "total": str(total)}
    if isinstance(reply, SectionAnswer):
        report = reply.item.report
        link = report.url or github_pr_url(report.repo, report.number) or "-"
        return Notice("answer_cut", {**counts, "link": link, "ref": report.ref})
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
