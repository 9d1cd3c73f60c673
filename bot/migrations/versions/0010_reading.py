"""reading state: the PRs each digest run holds (run_entries: shown, carried over as unread,
or kept for "+N more") and each destination's marks (reading_marks: read, snoozed, muted)

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    when = sa.DateTime(timezone=True)
    op.create_table(
        "run_entries",
        sa.Column(
            "run_id",
            sa.Integer,
            sa.ForeignKey("digest_runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("tag", sa.String(128), nullable=False),
        sa.Column("must_read", sa.Boolean, nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("part", sa.Integer, nullable=True),
        sa.Column("paged_at", when, nullable=True),
        sa.UniqueConstraint("run_id", "position", name="uq_run_entries_run_position"),
    )
    op.create_index("ix_run_entries_pr", "run_entries", ["repo", "number"])
    op.create_table(
        "reading_marks",
        sa.Column("destination_id", sa.Integer, sa.ForeignKey("destinations.id"), primary_key=True),
        sa.Column("kind", sa.String(8), primary_key=True),
        sa.Column("subject", sa.String(256), primary_key=True),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("at", when, nullable=False),
        sa.Column("until", when, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("reading_marks")
    op.drop_index("ix_run_entries_pr", "run_entries")
    op.drop_table("run_entries")
