"""report words: each report's whole words, so that `ci` is not found in "specific"

A word of the query language is a whole word in Latin script: its edges must meet a non-word
character in the text. The index learns each report's distinct runs of word characters:
SQLite a contentless FTS5 table `report_words` (rowid the report's seq, as report_fts), and
PostgreSQL an array column `report_search.words` with a GIN index. The facets are emptied, so
that the migration run fills the whole index again, word lists included, with the search code
of the release that runs it (bot/migrations/env.py).

Revision ID: 0016
Revises: 0015
"""

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

PENDING_LIST_KB = 1024  # as for the other GIN indexes of report_search (0008)


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "CREATE VIRTUAL TABLE report_words USING fts5("
            "words, tokenize=\"ascii tokenchars '_'\", detail=none, content='')"
        )
    else:
        op.execute("ALTER TABLE report_search ADD COLUMN words text[] NOT NULL DEFAULT '{}'")
        op.execute(
            "CREATE INDEX ix_report_search_words ON report_search USING gin (words)"
            f" WITH (gin_pending_list_limit = {PENDING_LIST_KB})"
        )
    op.execute("DELETE FROM report_facets")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TABLE IF EXISTS report_words")
    else:
        op.execute("DROP INDEX IF EXISTS ix_report_search_words")
        op.execute("ALTER TABLE report_search DROP COLUMN words")
