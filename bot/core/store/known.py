"""What the store knows about, counted: the repos of recent reports (a picker lists them).

Tags are counted by `ReportStore.tag_counts`; repos have a column of their own, so the
database counts them.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.store.tables import reports


async def repo_counts(engine: AsyncEngine, since: datetime | None = None) -> list[tuple[str, int]]:
    """Repos with how many reports they have (ingested or updated since `since`), most first."""
    count = func.count().label("n")
    query = select(reports.c.repo, count).group_by(reports.c.repo)
    if since is not None:
        query = query.where(reports.c.updated_at >= since)
    query = query.order_by(count.desc(), reports.c.repo)
    async with engine.connect() as conn:
        return [(str(repo), int(n)) for repo, n in (await conn.execute(query)).all()]
