"""Alembic environment: prdigest runs migrations programmatically on a live connection."""

from __future__ import annotations

from alembic import context

from bot.core.store.tables import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
context.run_migrations()
