"""One rendering per audience: the editions a tick shares among its destinations.

At 09:00 a hundred thousand chats may be due, but they follow a few hundred audiences. Two
runs get the same edition when their digests hold the same PRs with the same notes, title,
unread carry-over and synthesis, in the same locale, platform format, layout and verbosity on
the same date: everything the renderer reads. The digest of an audience is built once, its
messages rendered once and stored once (`bot/core/store/editions.py`); each run's outbox rows
then only say which part they send.

The memo is bounded: past MEMO_MAX digests or EDITION_MEMO_MAX editions it starts over (a
tick whose destinations all differ renders each, as before, in bounded memory).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from bot.core.delivery.queue import Queued, lay_out, prepare_topics, topics_of
from bot.core.delivery.reading import entry_rows
from bot.core.delivery.runs import PLATFORM_FORMAT, Run
from bot.core.digest.select import Digest
from bot.core.models import Format, Layout
from bot.core.record import record
from bot.core.render.options import DigestOptions
from bot.core.render.renderer import Renderer
from bot.core.store.editions import (
    EditionContent,
    EditionMessage,
    fill_editions,
    new_editions,
)

# Digests a tick keeps (an audience's subscriptions are spread over every batch: a memo that
# started over at 4,096 built each of 10,000 audiences' digests again for most of its runs).
MEMO_MAX = 16_384
# Editions hold only ids and placement (no payloads), so many more are kept: a memo that
# started over inside a tick rendered an audience again for each batch after it (10,000
# audiences were rendered 73,556 times at 4,096).
EDITION_MEMO_MAX = 32_768
# Rendered editions written at a time, within a batch: their payloads are all that a tick holds
# of them, and a batch of 1,000 destinations renders up to 1,000 (PostgreSQL plans two batches
# at once), which held 55 MB of message text at 5,000 audiences.
FILL_EVERY = 128


# The longest stretch of CPU-bound planning (digests built, editions rendered) between two
# turns of the event loop: the chat's answers share the loop with the tick.
BREATHE_SECONDS = 0.005


class Breather:
    """Hands the event loop to other tasks once BREATHE_SECONDS of planning have passed since
    it last did: a batch builds and renders hundreds of digests without an await of its own,
    and a `/pr` asked meanwhile would wait for all of them."""

    def __init__(self, every: float = BREATHE_SECONDS) -> None:
        self.every = every
        self._since = time.monotonic()

    async def breathe(self) -> None:
        if time.monotonic() - self._since >= self.every:
            await asyncio.sleep(0)
            self._since = time.monotonic()


@record
class Edition:
    """What a run needs of its edition: its id, how its messages are placed (no payloads)."""

    id: int
    messages: tuple[Queued, ...]
    topics: tuple[tuple[str, str], ...]  # a topics layout's forum topics: (key, name)


Pending = dict[Hashable, Edition]  # the editions a batch wrote in its open transaction


@dataclass(slots=True)
class Choice:
    """A batch's runs with their edition keys: the editions known, the ones to render."""

    keyed: list[tuple[Run, Layout, Hashable]] = field(default_factory=list)
    chosen: dict[Hashable, Edition] = field(default_factory=dict)
    fresh: dict[Hashable, tuple[Run, Layout]] = field(default_factory=dict)  # its run, layout


class EditionBook:
    """The digests and editions of one tick (or one planning call)."""

    def __init__(self, renderer: Renderer, now: datetime, fmt: Format | None = None) -> None:
        self.renderer = renderer
        self.now = now
        self.fmt = fmt  # a dry run's format; else each run's platform's
        self._digests: dict[Hashable, Digest] = {}
        self._editions: dict[Hashable, Edition] = {}  # written by transactions now committed
        self.rendered = 0  # editions rendered (and written)
        self.breather = Breather()  # the tick's: other tasks run between its digests

    def digest(self, audience: Hashable, build: Callable[[], Digest]) -> Digest:
        """The digest of `audience`, built on first use."""
        found = self._digests.get(audience)
        if found is None:
            if len(self._digests) >= MEMO_MAX:
                self._digests.clear()
            found = self._digests[audience] = build()
        return found

    def committed(self, pending: Pending) -> None:
        """The editions a batch wrote, once its transaction committed: later batches use them."""
        if len(self._editions) + len(pending) > EDITION_MEMO_MAX:
            self._editions.clear()
        self._editions.update(pending)

    async def assign(
        self,
        conn: AsyncConnection,
        runs: Sequence[tuple[Run, Hashable]],
        layouts: Mapping[int, Layout],
        pending: Pending,
    ) -> None:
        """Give each (run, audience) its edition: the ones this tick has not rendered yet are
        rendered once and written (into `pending`: the batch's own, visible to other batches
        once it commits); a topics run also gets its forum topic rows. `layouts`: a topics
        run's layout as planned now (`read_facts`)."""
        choice = self.choose(runs, layouts, pending)
        ids = await new_editions(conn, len(choice.fresh))
        async for contents in self.render_fresh(choice, ids, pending):
            await fill_editions(conn, self.now, contents)
        await self.write_topics(conn, self.place(choice))

    def choose(
        self, runs: Sequence[tuple[Run, Hashable]], layouts: Mapping[int, Layout], pending: Pending
    ) -> Choice:
        """Each run's edition key; the editions known already (the batch's own `pending`,
        then the memo's), and the ones to render. Taken from the memo at once, with no await:
        another batch planned meanwhile (two at once on PostgreSQL) may start it over."""
        choice = Choice()
        chosen, fresh, books = choice.chosen, choice.fresh, (pending, self._editions)
        for run, audience in runs:
            layout = run.lead.layout
            if layout is Layout.TOPICS:  # (the others are planned as asked)
                layout = layouts[run.destination_id]
            key = _edition_key(run, audience, layout)
            choice.keyed.append((run, layout, key))
            if key in chosen or key in fresh:
                continue
            for book in books:
                found = book.get(key)
                if found is not None:
                    chosen[key] = found
                    break
            else:
                fresh[key] = (run, layout)
        return choice

    async def render_fresh(
        self, choice: Choice, ids: Sequence[int], pending: Pending
    ) -> AsyncIterator[list[EditionContent]]:
        """Render the fresh editions of `choice` with their `ids`, FILL_EVERY at a time, each
        into `pending` and `choice`."""
        contents = []
        for edition_id, (key, (run, layout)) in zip(ids, choice.fresh.items(), strict=True):
            edition, content = self._render(edition_id, run, layout)
            pending[key] = choice.chosen[key] = edition
            self.rendered += 1
            contents.append(content)
            if len(contents) >= FILL_EVERY:
                yield contents
                contents = []
            await self.breather.breathe()
        if contents:
            yield contents

    @staticmethod
    def place(choice: Choice) -> list[tuple[Run, Edition]]:
        """Set each run's edition and messages; the topics runs, with theirs."""
        topics = []
        for run, layout, key in choice.keyed:
            edition = choice.chosen[key]
            run.edition, run.messages = edition.id, edition.messages
            if layout is Layout.TOPICS:
                topics.append((run, edition))
        return topics

    async def write_topics(
        self, conn: AsyncConnection, runs: Sequence[tuple[Run, Edition]]
    ) -> None:
        """The forum topic rows of topics runs (and the not-a-forum notice, where due)."""
        for run, edition in runs:
            lead = run.lead
            notice = (self.renderer, PLATFORM_FORMAT[lead.platform], lead.locale)
            await prepare_topics(conn, run.destination_id, edition.topics, notice, self.now)

    def _render(self, edition_id: int, run: Run, layout: Layout) -> tuple[Edition, EditionContent]:
        digest, lead = run.digest, run.lead
        assert digest is not None
        options = DigestOptions(
            layout=layout,
            verbosity=lead.verbosity,
            synthesis=digest.synthesis is not None,
            more_key=str(edition_id) if digest.more else "",
        )
        fmt = self.fmt or PLATFORM_FORMAT[lead.platform]
        parts = self.renderer.digest_parts(digest, fmt, lead.locale, date=run.day, options=options)
        queued = lay_out(parts, layout)
        picked = [item for part in run.parts for item in part.picked]
        shown, more = entry_rows(digest, picked, [message.shows for message in queued])
        placed = tuple(dataclasses.replace(message, payload={}) for message in queued)
        edition = Edition(edition_id, placed, topics_of(parts) if layout is Layout.TOPICS else ())
        sent = [EditionMessage(m.payload, m.reply_to_part, m.topic) for m in queued]
        return edition, EditionContent(edition_id, sent, shown, more)


def _edition_key(run: Run, audience: Hashable, layout: Layout) -> Hashable:
    """Everything the rendering of a run's digest depends on besides the audience's digest."""
    digest, lead = run.digest, run.lead
    assert digest is not None
    unread = tuple((entry.item.seq, entry.tag) for entry in digest.unread)
    unread_over = tuple(entry.item.seq for entry in digest.unread_over)
    return (
        audience,
        unread,
        unread_over,
        digest.unread_dropped,
        lead.platform,
        lead.locale,
        layout,
        lead.verbosity,
        run.day,
    )
