"""initial schema: reports, destinations, digest runs, outbox, dedupe, sources

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "counters",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("value", sa.BigInteger, nullable=False),
    )
    op.execute("INSERT INTO counters (name, value) VALUES ('report_seq', 0)")
    op.create_table(
        "reports",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False, unique=True),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.Column("tags", sa.Text, nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("merged_at", TS, nullable=True),
        sa.Column("ingested_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.UniqueConstraint("repo", "number", name="uq_reports_repo_number"),
    )
    op.create_index("ix_reports_number", "reports", ["number"])
    op.create_table(
        "destinations",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("platform", sa.String(16), nullable=False),
        sa.Column("target", sa.String(128), nullable=False),
        sa.Column("name", sa.String(128), nullable=True),
        sa.Column("origin", sa.String(16), nullable=False),
        sa.Column("filters", sa.JSON, nullable=False),
        sa.Column("schedule", sa.String(128), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("locale", sa.String(8), nullable=False),
        sa.Column("post_empty", sa.Boolean, nullable=False),
        sa.Column("active", sa.Boolean, nullable=False),
        sa.Column("deactivated_reason", sa.Text, nullable=True),
        sa.Column("consecutive_failures", sa.Integer, nullable=False),
        sa.Column("watermark", sa.BigInteger, nullable=False),
        sa.Column("next_send_at", TS, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.UniqueConstraint("platform", "target", name="uq_destinations_platform_target"),
    )
    op.create_table(
        "digest_runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("destination_id", sa.Integer, sa.ForeignKey("destinations.id"), nullable=False),
        sa.Column("scheduled_for", TS, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("from_seq", sa.BigInteger, nullable=False),
        sa.Column("to_seq", sa.BigInteger, nullable=False),
        sa.Column("entries", sa.Integer, nullable=False),
        sa.Column("messages", sa.Integer, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("finished_at", TS, nullable=True),
        sa.UniqueConstraint("destination_id", "scheduled_for", name="uq_digest_runs_dest_time"),
    )
    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("digest_runs.id"), nullable=True),
        sa.Column("destination_id", sa.Integer, sa.ForeignKey("destinations.id"), nullable=False),
        sa.Column("part", sa.Integer, nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", TS, nullable=False),
        sa.Column("lease_until", TS, nullable=True),
        sa.Column("claimed_by", sa.String(64), nullable=True),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("external_id", sa.String(128), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("sent_at", TS, nullable=True),
        sa.UniqueConstraint("run_id", "part", name="uq_outbox_run_part"),
    )
    op.create_index("ix_outbox_due", "outbox", ["status", "next_attempt_at"])
    op.create_table(
        "processed_events",
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "source_state",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("etag", sa.Text, nullable=True),
        sa.Column("last_modified", sa.Text, nullable=True),
        sa.Column("content_hash", sa.String(64), nullable=True),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("updated_at", TS, nullable=False),
    )


def downgrade() -> None:
    for table in (
        "source_state",
        "processed_events",
        "outbox",
        "digest_runs",
        "destinations",
        "reports",
        "counters",
    ):
        op.drop_table(table)
