"""layouts: a subscription's verbosity; outbox rows that reply to an earlier part of their run
or go to a forum topic; a destination's forum topics, and whether it is a forum at all

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    when = sa.DateTime(timezone=True)
    op.add_column(
        "subscriptions",
        sa.Column("verbosity", sa.String(16), nullable=False, server_default="standard"),
    )
    op.add_column("outbox", sa.Column("reply_to_part", sa.Integer, nullable=True))
    op.add_column("outbox", sa.Column("topic", sa.String(128), nullable=True))
    op.add_column("destinations", sa.Column("forum", sa.Boolean, nullable=True))
    op.add_column("destinations", sa.Column("forum_checked_at", when, nullable=True))
    op.add_column("destinations", sa.Column("layout_notice", sa.JSON, nullable=True))
    op.add_column("destinations", sa.Column("forum_told_at", when, nullable=True))
    op.create_table(
        "forum_topics",
        sa.Column(
            "destination_id",
            sa.Integer,
            sa.ForeignKey("destinations.id"),
            primary_key=True,
        ),
        sa.Column("key", sa.String(128), primary_key=True),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("thread_id", sa.String(32), nullable=True),
        sa.Column("created_at", when, nullable=False),
        sa.Column("opened_at", when, nullable=True),
    )


_ADDED = (
    ("destinations", "forum_told_at"),
    ("destinations", "layout_notice"),
    ("destinations", "forum_checked_at"),
    ("destinations", "forum"),
    ("outbox", "topic"),
    ("outbox", "reply_to_part"),
    ("subscriptions", "verbosity"),
)


def downgrade() -> None:
    op.drop_table("forum_topics")
    for table, column in _ADDED:  # SQLite drops columns natively (3.35 and later)
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
