"""What the store knows about: the repos of recent reports, counted (a picker lists them),
and which of some names are tags a stored report carries (`subscribe` reads those as tags).

Tags are counted by `ReportStore.tag_counts`; repos have a column of their own, so the
database counts them.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.query.text import SEP
from bot.core.store.tables import report_facets, reports


async def repo_counts(engine: AsyncEngine, since: datetime | None = None) -> list[tuple[str, int]]:
    """Repos with how many reports they have (ingested or updated since `since`), most first."""
    count = func.count().label("n")
    query = select(reports.c.repo, count).group_by(reports.c.repo)
    if since is not None:
        query = query.where(reports.c.updated_at >= since)
    query = query.order_by(count.desc(), reports.c.repo)
    async with engine.connect() as conn:
        return [(str(repo), int(n)) for repo, n in (await conn.execute(query)).all()]


async def tags_known(engine: AsyncEngine, names: Collection[str]) -> set[str]:
    """Which of `names` (normalized tags) a stored report carries: one indexed lookup of the
    facets' tags per name (at most a query's terms)."""
    found: set[str] = set()
    if not names:
        return found
    async with engine.connect() as conn:
        for name in names:
            if SEP in name or not name:
                continue
            hit = select(report_facets.c.report_id).where(
                report_facets.c.tags.contains(f"{SEP}{name}{SEP}", autoescape=True)
            )
            if (await conn.execute(hit.limit(1))).first() is not None:
                found.add(name)
    return found
