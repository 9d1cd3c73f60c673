"""PostgreSQL compresses rendered messages with lz4, not pglz

A tick at 100,000 subscriptions and 10,000 audiences writes about 125 MB of message payloads
(`edition_messages.payload`) and 27 MB of "+N more" lists (`editions.more`), each value a few
kilobytes, so PostgreSQL compresses every one of them (TOAST). pglz took about 2 s of the
server's CPU in such a tick; lz4 does the same work several times faster. Values already
stored keep their compression; new ones use lz4. A server built without lz4 (or older than
PostgreSQL 14, which has no per-column compression) keeps pglz. SQLite: nothing to do.

Revision ID: 0021
Revises: 0020
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

COLUMNS = (("edition_messages", "payload"), ("editions", "more"))
LZ4_SERVER = (14,)  # the first PostgreSQL with a compression per column


def _lz4_available() -> bool:
    bind = op.get_bind()
    version = bind.dialect.server_version_info or ()
    if bind.dialect.name != "postgresql" or tuple(version) < LZ4_SERVER:
        return False
    found = bind.execute(
        sa.text(
            "SELECT 1 FROM pg_settings"
            " WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)"
        )
    )
    return found.first() is not None


def upgrade() -> None:
    if _lz4_available():
        for table, column in COLUMNS:
            op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET COMPRESSION lz4")


def downgrade() -> None:
    if _lz4_available():
        for table, column in COLUMNS:
            op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET COMPRESSION default")
