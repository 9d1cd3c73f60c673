"""What the store knows about: the repos of recent reports, counted (a picker lists them),
and which of some names are tags a stored report carries (`subscribe` and the config's
`query:` read those as tags, `read_bare_tags`).

Tags are counted by `ReportStore.tag_counts`; repos have a column of their own, so the
database counts them.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import exists, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.query.ast import Query
from bot.core.query.known_tags import bare_words, read_known_tags
from bot.core.query.text import SEP
from bot.core.store.sql.tables import report_facets, reports


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
    """Which of `names` (normalized tags) a stored report carries: one statement, an EXISTS
    per name that stops at the first report with that tag (a name no report carries reads the
    facets' tags through)."""
    asked = [name for name in dict.fromkeys(names) if name and SEP not in name]
    if not asked:
        return set()
    checks = [
        exists()
        .where(report_facets.c.tags.contains(f"{SEP}{name}{SEP}", autoescape=True))
        .label(f"t{index}")
        for index, name in enumerate(asked)
    ]
    async with engine.connect() as conn:
        row = (await conn.execute(select(*checks))).one()
    return {name for name, hit in zip(asked, row, strict=True) if hit}


async def read_bare_tags(
    engine: AsyncEngine | None, query: Query, rule_tags: Collection[str]
) -> Query:
    """`query` with its unquoted bare words that name a known tag (one the tag rules give,
    or one a stored report carries; no store asked when `engine` is None) read as
    `tag:WORD` (query/known_tags.py)."""
    known = await known_tag_words(engine, bare_words(query), rule_tags)
    return read_known_tags(query, known) if known else query


async def known_tag_words(
    engine: AsyncEngine | None, words: Collection[str], rule_tags: Collection[str]
) -> set[str]:
    """Which of `words` name a known tag: one the tag rules give, or (asked in one statement,
    unless `engine` is None) one a stored report carries."""
    known = {word for word in words if word in rule_tags}
    unsure = [word for word in words if word not in known]
    if engine is not None and unsure:
        known |= await tags_known(engine, unsure)
    return known
