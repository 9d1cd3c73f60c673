"""Alembic environment: prdigest runs migrations programmatically on a live connection.

The revisions are frozen snapshots that import nothing from bot. What is derived from the
reports with today's code (the search index and its facets) is filled here, after the
revisions ran, when reports are stored but the index holds none of them: a store that came
through revision 0007, which made the index, or one whose index was emptied.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, func, inspect, select

from bot.core.store.search.text_index import fill_index
from bot.core.store.sql.tables import metadata, report_facets, reports


def _fill_index_if_empty(connection: Connection) -> None:
    if not inspect(connection).has_table("report_facets"):  # upgraded to a revision before it
        return
    if connection.execute(select(func.count()).select_from(report_facets)).scalar():
        return
    if connection.execute(select(reports.c.id).limit(1)).first() is not None:
        fill_index(connection)


connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
context.run_migrations()
_fill_index_if_empty(connection)
