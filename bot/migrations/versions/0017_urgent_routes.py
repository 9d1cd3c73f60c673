"""urgent routes: a subscription may speak in quiet hours, and may ignore the holidays

`subscriptions.urgent` (config `urgent: true`): the destination's quiet time (its quiet hours
and an ICS file's timed events) does not hold it; `subscriptions.holidays` (config
`holidays: false` makes it false): whether the destination's holiday calendar holds it. Every
subscription stored before keeps its destination's whole calendar.

Revision ID: 0017
Revises: 0016
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


_ADDED = ("holidays", "urgent")


def upgrade() -> None:
    op.add_column(
        "subscriptions", sa.Column("urgent", sa.Boolean, nullable=False, server_default=sa.false())
    )
    op.add_column(
        "subscriptions", sa.Column("holidays", sa.Boolean, nullable=False, server_default=sa.true())
    )


def downgrade() -> None:
    for column in _ADDED:  # SQLite drops columns natively (3.35 and later), in place
        op.execute(f"ALTER TABLE subscriptions DROP COLUMN {column}")
