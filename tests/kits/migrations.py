"""Alembic on a live connection, to a given revision (for the migration tests): run inside
`conn.run_sync(upgrade_to, "0013")`."""

from __future__ import annotations

from alembic import command
from alembic.config import Config as AlembicConfig
from sqlalchemy import Connection

from bot.core.store.db import MIGRATIONS_DIR


def alembic_config(connection: Connection | None = None) -> AlembicConfig:
    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def upgrade_to(connection: Connection, target: str) -> None:
    command.upgrade(alembic_config(connection), target)


def downgrade_to(connection: Connection, target: str) -> None:
    command.downgrade(alembic_config(connection), target)
