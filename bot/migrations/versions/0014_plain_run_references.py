"""the planner's hot rows point at their run and destination by plain columns

A tick at 100,000 subscriptions writes a run, a member and about two outbox rows per
destination. On PostgreSQL each foreign key on those rows is a trigger per row that reads and
locks the row it points at: without the outbox's two and the member's run, the server's time
in planning went down by about a sixth (statement times in pg_stat_statements). The code that writes these rows holds what they point at (the destination is
locked, the run is written in the same transaction), destinations are never deleted, and the
retention deletes a run's outbox rows and members with it, in that order. A member's
subscription keeps its foreign key: deleting a subscription deletes its members.

Revision ID: 0014
Revises: 0013
"""

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

# (table, column, referred table, ON DELETE)
_PLAIN = (
    ("outbox", "run_id", "digest_runs", None),
    ("outbox", "destination_id", "destinations", None),
    ("run_members", "run_id", "digest_runs", "CASCADE"),
)
# SQLite's are unnamed: named by this convention when batch mode reads the table.
_NAMES = {"fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s"}


def _name(table: str, column: str, referred: str) -> str:
    if op.get_bind().dialect.name == "postgresql":
        return f"{table}_{column}_fkey"  # PostgreSQL's own name for it
    return f"fk_{table}_{column}_{referred}"


def upgrade() -> None:
    for table in dict.fromkeys(table for table, *_ in _PLAIN):
        with op.batch_alter_table(table, naming_convention=_NAMES) as batch:
            for _, column, referred, _delete in (row for row in _PLAIN if row[0] == table):
                batch.drop_constraint(_name(table, column, referred), type_="foreignkey")


def downgrade() -> None:
    for table in dict.fromkeys(table for table, *_ in _PLAIN):
        with op.batch_alter_table(table, naming_convention=_NAMES) as batch:
            for _, column, referred, on_delete in (row for row in _PLAIN if row[0] == table):
                batch.create_foreign_key(
                    _name(table, column, referred), referred, [column], ["id"], ondelete=on_delete
                )
