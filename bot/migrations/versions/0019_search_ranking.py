"""search ranks by relevance and finds the related-PR lines and the key files' notes

report_facets gains what ranking counts besides the title and the one-liner: the
recommendation and the rest of the searched text (`details`). The related-PR lines (关联脉络)
and the key files' notes are searched too: SQLite's report_fts gains a column for each, and
PostgreSQL's report_search.body holds them after the text fields. The facets are emptied, so
that the migration run fills the whole index again with the search code of the release that
runs it (bot/migrations/env.py), as 0016 did.

PostgreSQL: after a bulk ingest the planner has no statistics for report_search (autovacuum
analyzes it later, or never on a small table), so it took the trigram index's guess for a
phrase and read thousands of rows; see PG_STATISTICS below.

Revision ID: 0019
Revises: 0018
"""

from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

# The SQLite full-text table as this revision makes it (a frozen copy).
SQLITE_FTS = (
    "CREATE VIRTUAL TABLE report_fts USING fts5(title, summary, recommendation, motivation,"
    " implementation, risks, impact, comment_highlights, related, key_files,"
    " tokenize='trigram case_sensitive 1', content='')"
)
COLUMNS = ("recommendation", "details")


def _facet_columns() -> None:
    for name in COLUMNS:
        op.execute(f"ALTER TABLE report_facets ADD COLUMN {name} TEXT NOT NULL DEFAULT ''")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TABLE IF EXISTS report_fts")
        op.execute(SQLITE_FTS)
    _facet_columns()
    op.execute("DELETE FROM report_facets")


def downgrade() -> None:
    # SQLite's report_fts keeps its two new columns: the code of 0018 writes and reads it by
    # column name, and making it again would leave it empty until the next rebuild.
    for name in COLUMNS:
        op.execute(f"ALTER TABLE report_facets DROP COLUMN {name}")
