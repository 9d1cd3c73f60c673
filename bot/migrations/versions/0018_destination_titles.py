"""destination titles: what a digest's header calls the chat it is posted in

`subscriptions.title` (config `title:`): the header names the destination by it ("RL team ·
tag view"), not by the subscriptions' names; none stored before, so their headers name the
repo they follow.

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("subscriptions", sa.Column("title", sa.String(80), nullable=True))


def downgrade() -> None:
    op.execute("ALTER TABLE subscriptions DROP COLUMN title")  # SQLite 3.35+ drops in place
