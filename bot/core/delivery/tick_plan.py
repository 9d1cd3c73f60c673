"""What the batches of one tick share (`TickPlan`): the windows read, each audience's picks
and digest, the editions rendered."""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from bot.core.delivery.editions import EditionBook
from bot.core.delivery.reading import DEFAULT_READING, ReadingPolicy
from bot.core.delivery.runs import Part
from bot.core.digest.select import DigestFilter, StoredReport
from bot.core.digest.terms import WindowTerms
from bot.core.logs import log
from bot.core.models import Format
from bot.core.render.renderer import Renderer
from bot.core.store.reports import WINDOW_LIMIT, WindowCache, count_after

logger = logging.getLogger("prdigest.outbox")


class TickPlan:
    """What the batches of one tick share: the windows read, each audience's picks and digest,
    the editions rendered."""

    def __init__(
        self,
        renderer: Renderer,
        now: datetime,
        windows: WindowCache | None = None,
        reading: ReadingPolicy = DEFAULT_READING,
        fmt: Format | None = None,
    ) -> None:
        self.now = now
        self.windows = windows or WindowCache(WINDOW_LIMIT)
        self.reading = reading
        self.book = EditionBook(renderer, now, fmt)
        self._window: list[StoredReport] | None = None  # the window the picks are of
        self.generation = 0  # counts the windows the picks were of (an audience names its own)
        self._picks: dict[tuple[DigestFilter, int, datetime], list[StoredReport]] = {}
        self._terms: dict[datetime, WindowTerms[StoredReport]] = {}  # the window's, by fire
        self._capped: list[StoredReport] | None = None  # a capped window, logged once
        self.floors: dict[datetime, int] = {}  # first digests' window starts (take_parts)

    def pick(self, window: list[StoredReport], part: Part) -> list[StoredReport]:
        """What the part's filter selects from the window (once per filter, start and fire):
        `select_new`'s list, worked out by terms (digest/terms.py): each term of every filter
        is asked of the window once, each filter is a few set operations. The list is shared
        (filters that pick the same reports get the same one): it must not be changed."""
        if window is not self._window:
            self._window, self._picks, self._terms = window, {}, {}
            self.generation += 1
        key = (part.sub.filter, part.start, part.fire)
        found = self._picks.get(key)
        if found is None:
            terms = self._terms.get(part.fire)
            if terms is None:
                terms = self._terms[part.fire] = WindowTerms(window, part.fire)
            found = self._picks[key] = terms.keep(part.sub.filter.plan, part.start)
        return found

    async def window(self, conn: AsyncConnection, label: str, start: int) -> list[StoredReport]:
        """The reports after `start`, at most WINDOW_LIMIT of them (a cap is logged once)."""
        window = await self.windows.after(conn, start)
        if len(window) == self.windows.limit and window is not self._capped:
            self._capped = window
            skipped = await count_after(conn, start) - len(window)
            log(logger, "digest.window_capped", logging.WARNING, destination=label, skipped=skipped)
        return window
