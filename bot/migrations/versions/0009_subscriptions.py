"""subscriptions: a destination holds any number of them; each existing destination becomes a
destination with one subscription (its filter, schedule, locale and watermark), its runs that
subscription's runs (a run in flight keeps its rows and finishes as before)

Revision ID: 0009
Revises: 0008
"""

import sqlite3

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_UNSUBSCRIBED = "unsubscribed from the chat"  # the reason `unsubscribe all` used to record
# Moved to subscriptions. SQLite drops them natively (3.35 and later).
_MOVED = ("name", "origin", "filters", "schedule", "timezone", "locale", "post_empty", "watermark")


def _tables() -> None:
    when = sa.DateTime(timezone=True)
    op.create_table(
        "subscriptions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("destination_id", sa.Integer, sa.ForeignKey("destinations.id"), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("origin", sa.String(16), nullable=False),
        sa.Column("filters", sa.JSON, nullable=False),
        sa.Column("schedule", sa.String(128), nullable=False),
        sa.Column("cadence", sa.String(128), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("locale", sa.String(8), nullable=False),
        sa.Column("layout", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(128), nullable=True),
        sa.Column("post_empty", sa.Boolean, nullable=False),
        sa.Column("locked", sa.Boolean, nullable=False),
        sa.Column("watermark", sa.BigInteger, nullable=False),
        sa.Column("created_at", when, nullable=False),
        sa.Column("updated_at", when, nullable=False),
        sa.UniqueConstraint("destination_id", "number", name="uq_subscriptions_dest_number"),
        sa.UniqueConstraint("destination_id", "name", name="uq_subscriptions_dest_name"),
    )
    op.create_table(
        "run_members",
        sa.Column(
            "run_id",
            sa.Integer,
            sa.ForeignKey("digest_runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "subscription_id",
            sa.Integer,
            sa.ForeignKey("subscriptions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("scheduled_for", when, nullable=False),
        sa.Column("from_seq", sa.BigInteger, nullable=False),
        sa.Column("to_seq", sa.BigInteger, nullable=False),
        sa.UniqueConstraint("subscription_id", "scheduled_for", name="uq_run_members_sub_time"),
    )
    op.create_index("ix_run_members_run", "run_members", ["run_id"])
    op.create_table(
        "instant_posts",
        sa.Column("destination_id", sa.Integer, sa.ForeignKey("destinations.id"), primary_key=True),
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column(
            "run_id",
            sa.Integer,
            sa.ForeignKey("digest_runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("posted_at", when, nullable=False),
    )
    op.create_table(
        "subscription_changes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("destination_id", sa.Integer, sa.ForeignKey("destinations.id"), nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Column("at", when, nullable=False),
    )
    op.create_index("ix_subscription_changes_at", "subscription_changes", ["at"])


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite" and sqlite3.sqlite_version_info < (3, 35):
        raise RuntimeError(
            f"migration 0009 needs SQLite 3.35 or later (this Python has {sqlite3.sqlite_version}):"
            " use a newer Python build, or PostgreSQL"
        )
    _tables()
    label = "d.platform || ':' || d.target"
    op.execute(
        f"""
        INSERT INTO subscriptions (destination_id, number, name, origin, filters, schedule,
            cadence, timezone, locale, layout, owner, post_empty, locked, watermark,
            created_at, updated_at)
        SELECT d.id, 1, COALESCE(d.name, {label}), d.origin, d.filters, d.schedule, d.schedule,
            d.timezone, d.locale, 'flat', NULL, d.post_empty, FALSE, d.watermark,
            d.created_at, d.updated_at
        FROM destinations d
        WHERE d.deactivated_reason IS NULL OR d.deactivated_reason <> '{_UNSUBSCRIBED}'
        """
    )
    # A chat that had stopped its own digests (`unsubscribe all`) now simply has none: its
    # destination is on again, and a new `subscribe` there starts from nothing.
    op.execute(
        f"""
        UPDATE destinations SET active = TRUE, deactivated_reason = NULL
        WHERE deactivated_reason = '{_UNSUBSCRIBED}'
        """
    )
    op.execute(
        """
        INSERT INTO run_members (run_id, subscription_id, scheduled_for, from_seq, to_seq)
        SELECT r.id, s.id, r.scheduled_for, r.from_seq, r.to_seq
        FROM digest_runs r JOIN subscriptions s ON s.destination_id = r.destination_id
        """
    )
    for column in _MOVED:
        op.execute(f"ALTER TABLE destinations DROP COLUMN {column}")


def downgrade() -> None:
    raise NotImplementedError("0009 has no downgrade: restore the backup taken before migrating")
