"""search reads less per query: SQLite walks the facets through one covering index, and
PostgreSQL's trigram index reads the text with its spaces as letters, so that a phrase's
trigrams span its words

SQLite: ix_report_facets_walk holds every facet a field term reads, in seq order, so a walk
over a range of seqs reads the index alone, not a table row per seq (the title and the
summary, which only ranking reads, stay out of it).

PostgreSQL: ix_report_search_body (pg_trgm on the text) becomes ix_report_search_phrase (pg_trgm
on the text with each space as an "x"). pg_trgm splits its trigrams at anything but letters and
digits, so the old index answered "weight sync" with every report that holds both words
anywhere (7,175 of 100,000 generated reports, for 390 matches), each then read to be checked;
the phrase's own trigrams ("htx", "txs") narrow it to about its matches. Both GIN indexes
keep a shorter list of written reports not yet merged (PENDING_LIST_KB, default 4 MB), which
every lookup scans until a vacuum or the next full list merges it: 4 MB cost a phrase lookup
5 ms after 100,000 reports were ingested; 1 MB slows a bulk ingest by about 15 %. The
statistics are gathered again, so the planner knows the new expression.

Revision ID: 0008
Revises: 0007
"""

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

PENDING_LIST_KB = 1024  # GIN's list of written rows not yet merged, which every lookup scans

# Every facets column but the title and the summary; seq first, the walk's order.
WALK_COLUMNS = [
    "seq",
    "at",
    "number",
    "impact",
    "rec",
    "repo",
    "tags",
    "risks",
    "names",
    "files",
    "symbols",
]


def _trgm_operator_class() -> str:
    bind = op.get_bind()
    schema = bind.exec_driver_sql(
        "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_trgm'"
    ).scalar_one()
    return f'"{schema}".gin_trgm_ops'


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.create_index("ix_report_facets_walk", "report_facets", WALK_COLUMNS)
        return
    op.drop_index("ix_report_search_body", table_name="report_search")
    op.execute(
        "CREATE INDEX ix_report_search_phrase ON report_search"
        f" USING gin ((translate(body, ' ', 'x')) {_trgm_operator_class()})"
        f" WITH (gin_pending_list_limit = {PENDING_LIST_KB})"
    )
    op.execute(
        f"ALTER INDEX ix_report_search_grams SET (gin_pending_list_limit = {PENDING_LIST_KB})"
    )
    op.execute("ANALYZE report_search")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.drop_index("ix_report_facets_walk", table_name="report_facets")
        return
    op.drop_index("ix_report_search_phrase", table_name="report_search")
    op.execute("ALTER INDEX ix_report_search_grams RESET (gin_pending_list_limit)")
    op.execute(
        "CREATE INDEX ix_report_search_body ON report_search"
        f" USING gin (body {_trgm_operator_class()})"
    )
