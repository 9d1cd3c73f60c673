"""report_facets: what the query language's field terms read, one row per report; SQLite's
full-text tables become contentless (keyed by seq)

The index is derived data: `bot.core.store.sql.db.migrate` fills it with the current code after the
migrations ran, when reports are stored and the index is empty, so this revision stays a frozen
snapshot that imports nothing from bot.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

# The SQLite index tables as this revision makes them (a frozen copy: later changes to the
# search code must not rewrite what this migration did).
SQLITE_SCHEMA = (
    "CREATE VIRTUAL TABLE report_fts USING fts5(title, summary, recommendation, motivation,"
    " implementation, risks, impact, comment_highlights,"
    " tokenize='trigram case_sensitive 1', content='')",
    "CREATE VIRTUAL TABLE report_grams USING fts5("
    "grams, tokenize='ascii', detail=none, content='')",
)
SQLITE_DROP = ("DROP TABLE IF EXISTS report_fts", "DROP TABLE IF EXISTS report_grams")


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


def downgrade() -> None:
    op.drop_table("report_facets")
