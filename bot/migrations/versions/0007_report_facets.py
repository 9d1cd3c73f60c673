"""report_facets: what the query language's field terms read, one row per report; SQLite's
full-text tables become contentless (keyed by seq); fills both for existing stores

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

from bot.core.store.search import SQLITE_DROP, SQLITE_SCHEMA, fill_index

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":  # 0006 made them with a copy of the text
        for statement in (*SQLITE_DROP, *SQLITE_SCHEMA):
            op.execute(statement)
    op.create_table(
        "report_facets",
        sa.Column(
            "report_id",
            sa.Integer,
            sa.ForeignKey("reports.id", ondelete="CASCADE"),
            primary_key=True,
            autoincrement=False,
        ),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("impact", sa.SmallInteger, nullable=True),
        sa.Column("rec", sa.SmallInteger, nullable=True),
        sa.Column("tags", sa.Text, nullable=False),
        sa.Column("risks", sa.Text, nullable=False),
        sa.Column("files", sa.Text, nullable=False),
        sa.Column("names", sa.Text, nullable=False),
        sa.Column("symbols", sa.Text, nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
    )
    op.create_index("ix_report_facets_at", "report_facets", ["at", "seq"])
    op.create_index("ix_report_facets_seq", "report_facets", ["seq"], unique=True)
    op.create_index("ix_report_facets_number", "report_facets", ["number"])
    fill_index(op.get_bind())


def downgrade() -> None:
    op.drop_table("report_facets")
