"""claims walk pending rows in (next_attempt_at, id) order: put id in the due index

SQLite keeps the rowid at the end of every index already; PostgreSQL needs the column to
walk the index in claim order instead of sorting every due row.

Revision ID: 0005
Revises: 0004
"""

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_outbox_due", table_name="outbox")
    op.create_index("ix_outbox_due", "outbox", ["status", "next_attempt_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_outbox_due", table_name="outbox")
    op.create_index("ix_outbox_due", "outbox", ["status", "next_attempt_at"])
