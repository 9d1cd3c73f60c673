"""Alembic on a live connection, to a given revision (for the migration tests): run inside
`conn.run_sync(upgrade_to, "0013")`."""

from __future__ import annotations

from alembic import command
from sqlalchemy import Connection

from bot.core.store.sql.db import alembic_config

__all__ = ["alembic_config", "downgrade_to", "upgrade_to"]


def upgrade_to(connection: Connection, target: str) -> None:
    command.upgrade(alembic_config(connection), target)


def downgrade_to(connection: Connection, target: str) -> None:
    command.downgrade(alembic_config(connection), target)
