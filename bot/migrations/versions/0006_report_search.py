"""report_search: a full-text index of the reports' text fields (0007 fills it)

SQLite: two FTS5 tables (trigram; characters and pairs for words under three characters).
PostgreSQL: report_search with a pg_trgm GIN index on the joined text and a GIN index on the
array of characters and pairs; the pg_trgm extension is created if missing (in public, where
other schemas find it; its operator class is named with the schema it lives in).

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
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

TRGM_SCHEMA = sa.text(
    "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_trgm'"
)


def _trgm_schema(bind: sa.Connection) -> str:
    schema = bind.execute(TRGM_SCHEMA).scalar()
    if schema is None:
        has_public = bind.execute(
            sa.text("SELECT 1 FROM pg_namespace WHERE nspname = 'public'")
        ).scalar()
        op.execute(
            "CREATE EXTENSION IF NOT EXISTS pg_trgm" + (" SCHEMA public" if has_public else "")
        )
        schema = bind.execute(TRGM_SCHEMA).scalar_one()
    return str(schema)


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        for statement in SQLITE_SCHEMA:
            op.execute(statement)
    else:
        trgm = _trgm_schema(bind)
        op.create_table(
            "report_search",
            sa.Column(
                "report_id",
                sa.Integer,
                sa.ForeignKey("reports.id", ondelete="CASCADE"),
                primary_key=True,
            ),
            sa.Column("body", sa.Text, nullable=False),
            sa.Column("grams", sa.ARRAY(sa.Text), nullable=False),
        )
        op.execute(
            "CREATE INDEX ix_report_search_body ON report_search"
            f' USING gin (body "{trgm}".gin_trgm_ops)'
        )
        op.execute("CREATE INDEX ix_report_search_grams ON report_search USING gin (grams)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for statement in SQLITE_DROP:
            op.execute(statement)
    else:
        op.drop_table("report_search")
