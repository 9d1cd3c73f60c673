"""a destination remembers that its digest failed to plan, and when to try again

A digest that cannot be planned or rendered for one destination (a bug its data provokes) no
longer stops the tick for everyone: the destination keeps how many tries in a row failed
(`plan_failures`), the last error (`plan_error`), when the next try is due (`plan_retry_at`,
backing off) and when its chat was told (`plan_told_at`, once a streak).

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


_ADDED = ("plan_failures", "plan_error", "plan_retry_at", "plan_told_at")


def upgrade() -> None:
    with op.batch_alter_table("destinations") as batch:
        batch.add_column(sa.Column("plan_failures", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("plan_error", sa.Text, nullable=True))
        batch.add_column(sa.Column("plan_retry_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("plan_told_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    for column in _ADDED:  # SQLite drops columns natively (3.35 and later), in place
        op.execute(f"ALTER TABLE destinations DROP COLUMN {column}")
